#if !canImport(Darwin)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Works around swift-corelibs-foundation's handling of HTTP authentication challenges (Linux).
///
/// A 401 carrying `WWW-Authenticate: Basic` or `Digest` becomes an authentication challenge. Unless
/// a delegate answers it with a credential, the task never completes: default handling without a
/// proposed credential does nothing (measured: a wrong Basic password against httpbin hung until
/// Courier's deadline, then `timedOut`), and rejecting the protection space cancels the task.
/// Courier never answers challenges with credentials — credentials are explicit header fields
/// (``BasicCredentials``, ``AuthInterceptor``) — so the session delegate cancels the challenge
/// and keeps the 401's status and header fields here; ``URLSessionTransport`` then returns them as
/// the response. Linux gives no access to that response's body, so the body is empty. On Apple
/// platforms URLSession delivers the 401 itself and none of this is compiled.
final class ChallengedResponses: Sendable {
    /// Responses by request key; bounded, so entries a cancelled caller never collects cannot grow
    /// without limit.
    private let responses = Locked<[String: HTTPURLResponse]>([:])
    private static let capacity = 64

    /// The key of a request: method and URL (identical requests get the same challenge).
    static func key(_ request: URLRequest?) -> String? {
        guard let url = request?.url else { return nil }
        return (request?.httpMethod ?? "GET") + " " + url.absoluteString
    }

    /// Keeps `response` for `request`.
    func store(_ response: HTTPURLResponse, for request: URLRequest?) {
        guard let key = Self.key(request) else { return }
        responses.withLock { responses in
            if responses.count >= Self.capacity { responses.removeAll() }
            responses[key] = response
        }
    }

    /// Removes and returns the response kept for `request`, if any.
    func take(for request: URLRequest) -> HTTPURLResponse? {
        guard let key = Self.key(request) else { return nil }
        return responses.withLock { $0.removeValue(forKey: key) }
    }
}

extension TransportSessionDelegate {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        if let response = challenge.failureResponse as? HTTPURLResponse {
            challengedResponses.store(response, for: task.originalRequest)
        }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }
}

extension URLSessionTransport {
    /// The 401 kept by the session delegate when `error` is the cancellation that ended its
    /// challenge (and not the caller's own cancellation).
    func challengedResponse(for request: URLRequest, after error: any Error) -> HTTPResponse? {
        let nsError = error as NSError
        guard nsError.domain == NSURLErrorDomain, nsError.code == NSURLErrorCancelled, !Task.isCancelled,
              let delegate = session.delegate as? TransportSessionDelegate,
              let response = delegate.challengedResponses.take(for: request)
        else { return nil }
        return HTTPResponse(statusCode: response.statusCode, headers: HTTPHeaders(response), body: Data(), url: response.url)
    }
}
#endif
