import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension NetworkError {
    /// Maps any error thrown while sending to the case the UI acts on.
    ///
    /// `CancellationError` and `URLError.cancelled` (how URLSession reports a cancelled task, on
    /// Linux always) both become ``cancelled``; a ``NetworkError`` passes through unchanged.
    public init(_ error: any Error) {
        switch error {
        case let error as NetworkError:
            self = error
        case is CancellationError:
            self = .cancelled
        case let error as TokenStoreError:
            self = .tokenStoreFailed(error)
        case let error as URLError:
            self = NetworkError(urlError: error)
        case let error as EncodingError:
            self = .invalidRequest("could not encode the request: \(error)")
        default:
            self = .transport(URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: String(describing: error)]))
        }
    }

    /// Maps a `URLError` by what the user can do about it.
    ///
    /// - Parameter unavailableReason: Reads the system's reason for refusing a network (Apple's
    ///   `networkUnavailableReason`); the platform's by default.
    package init(
        urlError: URLError,
        unavailableReason: (URLError) -> NetworkUnavailableReason? = PlatformAdapters.networkUnavailableReason
    ) {
        switch urlError.code {
        case .cancelled:
            self = .cancelled
        case .timedOut:
            self = .timedOut(urlError)
        case .notConnectedToInternet, .dataNotAllowed, .internationalRoamingOff, .callIsActive:
            // Apple: a path the request's network access refused (Low Data Mode, cellular).
            if let reason = unavailableReason(urlError) {
                self = .networkUnavailable(reason)
            } else {
                self = .offline(urlError)
            }
        case .unsupportedURL where ["http", "https", nil].contains(urlError.failingURL?.scheme?.lowercased()):
            // Courier only builds http(s) URLs: an "unsupported" answer to one is the server's reply
            // (libcurl refuses a reply that is not HTTP/1.x or HTTP/2 — an HTTP/0.9 or garbage line).
            self = .transport(
                URLError(
                    .badServerResponse,
                    userInfo: [
                        NSLocalizedDescriptionKey:
                            "the server's reply is not an HTTP response (\(urlError.localizedDescription))"
                    ]))
        case .badURL, .unsupportedURL:
            // The URL as logs show it: its query tokens and password hidden (the description
            // reaches logs and crash reports).
            self = .invalidRequest(
                "bad URL: \(urlError.failingURL.map(Redactor().redact(url:)) ?? urlError.localizedDescription)")
        default:
            if let failure = ResponseCodingFailure(urlError) {
                self = .undecodableResponse(failure)
            } else {
                self = .transport(urlError)
            }
        }
    }

    /// The error for a response whose status the endpoint does not accept.
    ///
    /// - Parameters:
    ///   - response: The response.
    ///   - knownErrors: The endpoint's messages by status (see ``Endpoint/knownErrors``).
    ///   - redactor: Hides secrets in the body snippet and the server's message (the client's).
    ///   - request: The request sent: the values of its secret header fields, query parameters and
    ///     body fields are hidden too (a page that echoes `Authorization`, a message that repeats
    ///     the password).
    ///   - hiding: Other values to hide likewise (the tokens a token refresh sent).
    package init(
        response: HTTPResponse, knownErrors: [Int: String] = [:], redactor: Redactor = Redactor(),
        request: URLRequest? = nil, hiding: [String] = []
    ) {
        let failed = FailedResponse(
            response, knownMessage: knownErrors[response.statusCode], redactor: redactor, request: request,
            hiding: hiding)
        switch response.statusCode {
        case 401: self = .unauthorized(failed)
        case 403: self = .forbidden(failed)
        case 404, 410: self = .notFound(failed)
        case 409: self = .conflict(failed)
        case 422: self = .unprocessable(ValidationProblem(failed, redactor: redactor, request: request))
        case 429: self = .rateLimited(retryAfter: RetryAfter(response: response), response: failed)
        case 400..<500: self = .client(failed)
        default: self = .server(failed)
        }
    }
}
