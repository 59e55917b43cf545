import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ErrorRecord {
    /// A stable, low-cardinality label for `error`, for logs and metrics: the ``NetworkError`` case
    /// name the client would map it to (`offline`, `timedOut`, `cancelled`, `transport`,
    /// `unauthorized`, `sessionExpired`, `decoding`…), `pinning` for a certificate-pinning
    /// failure (``PinningFailure``), `certificate` for any other refused server certificate
    /// (``CertificateFailure``), `other` for an error Courier does not know.
    package static func kind(of error: any Error) -> String {
        switch error {
        case is CancellationError:
            return "cancelled"
        case let error as URLError:
            if error.pinningFailure != nil { return "pinning" }
            if error.certificateFailure != nil { return "certificate" }
            return label(of: NetworkError(urlError: error))
        case let error as NetworkError:
            if case .transport(let urlError) = error, urlError.pinningFailure != nil { return "pinning" }
            if error.certificateFailure != nil { return "certificate" }
            return label(of: error)
        default:
            return "other"
        }
    }

    private static func label(of error: NetworkError) -> String { error.kind.rawValue }

    /// Domain, code and a description of `error` that carries no response body: bodies of failed
    /// responses may hold anything, so only their status and error code are described.
    static func describe(_ error: any Error) -> (domain: String, code: Int?, message: String) {
        switch error {
        case is CancellationError:
            return ("Swift.CancellationError", nil, "cancelled")
        case let error as URLError:
            return (NSURLErrorDomain, error.errorCode, describe(error))
        case let error as NetworkError:
            let domain = "Courier.NetworkError"
            switch error {
            case .offline(let urlError), .transport(let urlError):
                return (domain, urlError.errorCode, describe(urlError))
            case .timedOut(let urlError):
                return (domain, urlError?.errorCode, urlError.map(describe) ?? "the call's deadline passed")
            case .cancelled:
                return (domain, nil, "cancelled")
            case .sessionExpired:
                return (domain, nil, "session expired")
            case .signedOut:
                return (domain, nil, "signed out; nothing sent")
            case .tokenStoreFailed(let failure):
                return (domain, nil, "token store failed: \(failure); nothing sent")
            case .notCached:
                return (domain, nil, "not in the cache (only-if-cached)")
            case .backendUnavailable(let host, let wait):
                return (
                    domain, nil, "backend unavailable: \(host), retry after \(LogFormatting.milliseconds(wait)); nothing sent"
                )
            case .streamBufferOverflow(let limit):
                return (domain, nil, "stream consumer more than \(limit) bytes behind")
            case .responseTooLarge(let limit):
                return (domain, nil, "response body larger than \(limit) bytes")
            case .undecodableResponse(let failure):
                return (domain, failure.underlying.errorCode, describe(failure.underlying))
            case .decoding(let failure):
                return (domain, failure.statusCode, "could not decode \(failure.typeName) at \(failure.codingPath)")
            case .invalidRequest(let reason):
                return (domain, nil, "invalid request: \(reason)")
            default:
                let response = error.failedResponse
                let code = response?.code.map { " code=\($0)" } ?? ""
                return (domain, response?.statusCode, "HTTP \(response?.statusCode ?? 0)\(code)")
            }
        default:
            let type = String(reflecting: Swift.type(of: error))
            return (type, nil, String(String(describing: error).prefix(300)))
        }
    }

    private static func describe(_ error: URLError) -> String {
        if let failure = error.pinningFailure { return failure.description }
        return "URLError \(error.errorCode): \(error.localizedDescription)"
    }
}
