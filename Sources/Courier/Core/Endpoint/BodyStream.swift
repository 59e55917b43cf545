import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Request body bytes read from an `InputStream` (``RequestBody/stream(_:contentType:)``), with
/// whether they can be produced again (``iterationBehavior``, the same spelling as a response's
/// ``MessageBody/iterationBehavior-swift.property``).
///
/// A call may send its request more than once — a retry, a 307/308 redirect (RFC 9110 §15.4.8–9),
/// a resend after a token refresh. A ``MessageBody/IterationBehavior-swift.enum/multiple`` body
/// (``file(_:)``, ``factory(length:_:)``) is produced afresh for every send and arrives
/// byte-identical each time. A ``MessageBody/IterationBehavior-swift.enum/single`` body
/// (``once(_:length:)``) is sent at most once: every path that would repeat the request returns
/// the first response or error instead, and a redirect that must repeat the body fails with
/// ``NetworkError/invalidRequest(_:)`` — never an empty or partial resend.
public struct BodyStream: Sendable {
    /// Whether the bytes can be produced again for another send: ``MessageBody/IterationBehavior-swift.enum/multiple``
    /// for a file or a factory, ``MessageBody/IterationBehavior-swift.enum/single`` for a one-shot stream.
    public let iterationBehavior: MessageBody.IterationBehavior

    /// `true` when the bytes can be produced again (``iterationBehavior`` is `.multiple`).
    @available(*, deprecated, renamed: "iterationBehavior", message: "compare iterationBehavior with .multiple")
    public var isReplayable: Bool { iterationBehavior == .multiple }
    /// The body length in bytes when known: sent as `Content-Length` on Apple platforms; `nil`
    /// sends `Transfer-Encoding: chunked` (RFC 9112 §7.1), which URLSession on Linux uses for
    /// every stream.
    public let length: Int?
    private let produce: @Sendable () throws -> InputStream

    private init(
        iterationBehavior: MessageBody.IterationBehavior, length: Int?, produce: @escaping @Sendable () throws -> InputStream
    ) {
        self.iterationBehavior = iterationBehavior
        self.length = length
        self.produce = produce
    }

    /// A stream that can be read only once (a pipe, a live capture). Never re-sent.
    ///
    /// - Parameters:
    ///   - stream: The unopened stream; Courier owns it from now on.
    ///   - length: Its length in bytes, when known.
    public static func once(_ stream: InputStream, length: Int? = nil) -> BodyStream {
        let box = OneShot(stream)
        return BodyStream(iterationBehavior: .single, length: length) { try box.take() }
    }

    /// A body made fresh by `make` for every send; each call must return a new, unopened stream
    /// over the same bytes.
    ///
    /// - Parameters:
    ///   - length: The length in bytes, when known.
    ///   - make: Creates the stream. An error it throws fails the call with
    ///     ``NetworkError/invalidRequest(_:)``.
    public static func factory(length: Int? = nil, _ make: @escaping @Sendable () throws -> InputStream) -> BodyStream {
        BodyStream(iterationBehavior: .multiple, length: length, produce: make)
    }

    /// The contents of a file, read afresh for every send (replayable), 64 KiB at a time.
    ///
    /// - Parameter url: A `file:` URL of a regular file. Its size at the time of this call is the
    ///   body's length (sent as `Content-Length` where the platform can). The call fails with
    ///   ``NetworkError/invalidRequest(_:)`` — nothing, or no complete body, reaches the server —
    ///   when the file is missing, is not a regular file or cannot be opened when the request is
    ///   sent, or when it holds fewer bytes than that length while it is read (it was truncated or
    ///   replaced meanwhile): never an empty or shortened body.
    public static func file(_ url: URL) -> BodyStream {
        let size = FileSize.of(url)
        return BodyStream(iterationBehavior: .multiple, length: size.map { Int($0) }) {
            guard let size else { throw BodyStreamError.unreadable(url.lastPathComponent) }
            return SourceInputStream.make(FileRangeSource(url: url, offset: 0, length: size))
        }
    }

    /// A stream for the next send.
    ///
    /// - Throws: ``NetworkError/invalidRequest(_:)`` when a one-shot body was already taken or the
    ///   factory failed.
    package func makeStream() throws -> InputStream {
        do {
            return try produce()
        } catch let error as BodyStreamError {
            throw NetworkError.invalidRequest(error.description)
        } catch {
            throw NetworkError.invalidRequest("the request body stream could not be created: \(error)")
        }
    }
}

private enum BodyStreamError: Error, CustomStringConvertible {
    case consumed
    case unreadable(String)

    var description: String {
        switch self {
        case .consumed: return "the one-shot request body was already sent and cannot be sent again"
        case .unreadable(let name): return "the request body file '\(name)' is missing or not a regular file"
        }
    }
}

/// Hands its stream out once. `InputStream` is not `Sendable`; it is only ever touched by the one
/// send that takes it.
private final class OneShot: @unchecked Sendable {
    private let lock = NSLock()
    private var stream: InputStream?

    init(_ stream: InputStream) { self.stream = stream }

    func take() throws -> InputStream {
        lock.lock()
        defer { lock.unlock() }
        guard let stream else { throw BodyStreamError.consumed }
        self.stream = nil
        return stream
    }
}
