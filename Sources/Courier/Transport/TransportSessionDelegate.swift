import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session delegate of ``URLSessionTransport``.
///
/// - **Redirects are never followed by URLSession**: the 3xx response is returned as is and
///   Courier's own redirect step (`RedirectFollower`) decides what to send next, the same way on
///   every platform and transport (RFC 9110 §15.4).
/// - **HTTP authentication challenges are answered on Linux**, where swift-corelibs-foundation
///   turns a 401 with a `Basic` or `Digest` challenge into a challenge and, unless a delegate
///   answers it with a credential, never completes the task (measured: it hangs until the call's
///   deadline). Courier never answers with a credential — credentials are explicit header fields
///   (``BasicCredentials``, ``AuthInterceptor``) — so the delegate cancels the challenge and the
///   call gets the 401, its header fields and body, as a response. For that the delegate carries
///   each task's response and body (a task-id → call map; the async `data(for:)` cannot return a
///   response whose challenge was cancelled, and per-task delegates are ignored on Linux). On Apple
///   platforms URLSession's default handling returns the 401 itself (with no stored credential:
///   the session is ephemeral), and per-task delegates (pinning, metrics) keep handling
///   server-trust challenges.
///
/// Streamed calls (``URLSessionTransport/stream(_:options:)``) run through this delegate on every
/// platform: a task-id → call map hands the head to the caller on `didReceive response` and each
/// `didReceive data` chunk to the call's ``StreamBuffer``.
final class TransportSessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    /// The streamed calls running now, by task identifier.
    let streams = Locked<[Int: StreamingCall]>([:])

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if let http = response as? HTTPURLResponse { deliverHead(dataTask.taskIdentifier, http) }
        completionHandler(.allow)
    }

    #if canImport(Darwin)
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        _ = receiveStreamed(dataTask.taskIdentifier, data, task: dataTask)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        completeStreamed(task.taskIdentifier, error: error, response: task.response)
    }
    #endif

    /// Upload progress of the calls this delegate runs (Linux) and of streamed calls (every
    /// platform); Apple's buffered calls report through their per-task delegate instead.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        // A streamed body's expected length is unknown (-1) on Linux: it is sent chunked.
        let id = task.taskIdentifier
        #if canImport(FoundationNetworking)
        let reporter = streams.withLock { $0[id]?.progress } ?? calls.withLock { $0[id]?.progress }
        #else
        let reporter = streams.withLock { $0[id]?.progress }
        #endif
        reporter?.didSend(totalBytesSent, of: totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    #if canImport(FoundationNetworking)
    /// One running call on Linux: where its response goes and what arrived so far.
    private struct Call {
        let continuation: CheckedContinuation<HTTPResponse, any Error>
        /// Where the request body's bytes are reported (an upload's progress), if anywhere.
        let progress: TransferProgressReporter?
        var body = Data()
    }

    private let calls = Locked<[Int: Call]>([:])

    /// Runs `task` and returns its complete response; cancelling the calling task cancels it.
    func run(_ task: URLSessionDataTask) async throws -> HTTPResponse {
        let id = task.taskIdentifier
        let progress = TransferProgressReporter.current
        let control = TaskControl.Commands(task)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                calls.withLock { $0[id] = Call(continuation: continuation, progress: progress) }
                // Cancelled before it started (the handler below may already have run and found
                // nothing to wait for): never start it. A cancel after this check reaches the
                // running task and completes it through the delegate.
                if Task.isCancelled {
                    finish(id) { _ in .failure(URLError(.cancelled)) }
                } else {
                    control.resume()
                }
            }
        } onCancel: {
            control.cancel()
        }
    }

    private func finish(_ id: Int, with result: (Data) -> Result<HTTPResponse, any Error>) {
        guard let call = calls.withLock({ $0.removeValue(forKey: id) }) else { return }
        call.continuation.resume(with: result(call.body))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if receiveStreamed(dataTask.taskIdentifier, data, task: dataTask) { return }
        calls.withLock { $0[dataTask.taskIdentifier]?.body.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let mapped = error.map { error -> URLError in
            let urlError = error as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error])
            return URLSessionTransport.linuxFailure(urlError)
        }
        if completeStreamed(task.taskIdentifier, error: mapped, response: task.response) { return }
        finish(task.taskIdentifier) { body in
            if let error {
                let urlError = error as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error])
                return .failure(URLSessionTransport.linuxFailure(urlError))
            }
            guard let http = task.response as? HTTPURLResponse else { return .failure(URLError(.badServerResponse)) }
            return .success(HTTPResponse(http, body: body))
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        // Linux raises no server-trust or client-certificate challenge. swift-corelibs-foundation raises the challenge once the whole 401 has arrived; every
        // disposition but a credential then cancels the task, so the call gets the 401 first.
        if let failure = challenge.failureResponse as? HTTPURLResponse {
            if streams.withLock({ $0[task.taskIdentifier] != nil }) {
                deliverHead(task.taskIdentifier, failure)
                completeStreamed(task.taskIdentifier, error: nil, response: failure)
            } else {
                finish(task.taskIdentifier) { .success(HTTPResponse(failure, body: $0)) }
            }
        }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }
    #endif
}

extension HTTPResponse {
    /// A response from Foundation's `HTTPURLResponse` and the body bytes.
    init(_ response: HTTPURLResponse, body: Data) {
        self.init(statusCode: response.statusCode, headers: HTTPHeaders(response), body: body, url: response.url)
    }
}
