#if canImport(CourierCurl)
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Raw URLSession driven by a session delegate (`didReceive` data, `didCompleteWithError`) on the
/// same kind of delegate queue as Courier's transport, but without Courier: the share of Courier's
/// extra CPU over `data(for:)` that FoundationNetworking's delegate path costs by itself.
/// `courier-bench --only cpu … --profile rawDelegate` only (not a row of the table).
///
/// With `queued`, each data task is made and started on a serial `DispatchQueue` of its own, as
/// Courier's transport does so that FoundationNetworking's `dataTask(with:)` (a `sync` onto the
/// session's work queue) never blocks a thread of the cooperative pool: the cost of that rule alone.
struct RawDelegateClient: Sendable {
    private let delegate = Delegate()
    private let session: URLSession
    private let queued: Bool

    init(queued: Bool = false) {
        self.queued = queued
        session = URLSession(
            configuration: URLSessionTransport.defaultConfiguration(), delegate: delegate,
            delegateQueue: BoundedDelegateQueue())
    }

    /// `GET url`: the body once the task completed.
    func get(_ url: URL) async throws -> Data {
        var request = URLRequest(url: url)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if queued {
            let (session, delegate, request) = (session, delegate, request)
            return try await withCheckedThrowingContinuation { continuation in
                DispatchQueue(label: "bench.raw-delegate.task").async {
                    let task = session.dataTask(with: request)
                    delegate.calls.withLock { $0[task.taskIdentifier] = Call(continuation: continuation) }
                    task.resume()
                }
            }
        }
        let task = session.dataTask(with: request)
        return try await withCheckedThrowingContinuation { continuation in
            delegate.calls.withLock { $0[task.taskIdentifier] = Call(continuation: continuation) }
            task.resume()
        }
    }

    func finish() { session.finishTasksAndInvalidate() }

    private struct Call: Sendable {
        let continuation: CheckedContinuation<Data, any Error>
        var body = Data()
    }

    private final class Delegate: NSObject, URLSessionDataDelegate, Sendable {
        let calls = Locked<[Int: Call]>([:])

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            calls.withLock { $0[dataTask.taskIdentifier]?.body.append(data) }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let call = calls.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            if let error { call.continuation.resume(throwing: error) } else { call.continuation.resume(returning: call.body) }
        }
    }
}
#endif
