// TEMPORARY: compile-only stand-ins for the streamed-body core landing on main (STREAM-API.md).
// Deleted at the rebase onto main.
import Courier
import Foundation

final class StreamBuffer: @unchecked Sendable {
    enum Demand { case more, pause }
    init(limit: Int, pausesProducer: Bool, onCancel: @escaping @Sendable () -> Void) {}
    func append(_ chunk: Data) -> Demand { .more }
    func finish(throwing error: (any Error)? = nil) {}
    func setOnResume(_ body: @escaping @Sendable () -> Void) {}
}

struct HTTPBody: Sendable {
    enum Length: Sendable, Hashable {
        case known(Int64)
        case unknown
    }
    init(buffer: StreamBuffer, length: Length) {}
}

extension HTTPResponse {
    var streamedBody: HTTPBody? {
        get { nil }
        set {}
    }
}
