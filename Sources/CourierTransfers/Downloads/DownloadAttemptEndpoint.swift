import Courier
import Foundation

/// The caller's endpoint for one download attempt: the same request plus the fields a resumable
/// download sends — `Accept-Encoding: identity` (offsets and lengths must count the file's own
/// bytes) and, when continuing, `Range` and `If-Range` — with the download's one idempotency key,
/// accepting `206` and `416` besides the
/// endpoint's own statuses, and never answered from or stored in the HTTP cache.
struct DownloadAttemptEndpoint<Base: Endpoint>: WrappedEndpoint {
    typealias Response = Base.Response

    let base: Base
    /// `(offset, validator)` to continue from, `nil` for the whole file.
    let resume: (offset: Int64, validator: String)?
    /// The download's one idempotency policy for every attempt (`.automatic` made a key once).
    let idempotency: IdempotencyPolicy

    var policy: EndpointPolicy { base.policy.with(\.cache, .bypassCache).with(\.idempotency, idempotency) }

    var headers: HTTPHeaders {
        var headers = base.headers
        headers.replace("Accept-Encoding", with: "identity")
        if let resume {
            headers.replace("Range", with: DownloadRules.rangeValue(from: resume.offset))
            headers.replace("If-Range", with: resume.validator)
        } else {
            headers.remove("Range")
            headers.remove("If-Range")
        }
        return headers
    }

    var statusValidation: StatusValidation {
        switch base.statusValidation {
        case .successful: return .codes(Set(200..<300).union([416]))
        case .codes(let codes): return .codes(codes.union([206, 416]))
        case .none: return .none
        }
    }
}
