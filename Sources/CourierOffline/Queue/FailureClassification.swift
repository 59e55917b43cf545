import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// How the queue treats a failed attempt.
enum FailureClass: Equatable {
    /// Try again later (offline, timed out, connection lost, 408, 429, 5xx); `retryAfter` is the
    /// server's requested wait (RFC 9110 §10.2.3), if any.
    case transient(retryAfter: Duration?)
    /// 409 or 412: apply the kind's conflict policy.
    case conflict
    /// The server refused the change for good (other 4xx, a rejected 2xx envelope), its reply
    /// cannot be read and would not be on another try (``repeatsIdentically(_:)``), or the request
    /// cannot be built: dead-letter it.
    case permanent
    /// The flush was cancelled: leave the mutation as it is.
    case cancelled

    /// Classifies an error thrown by `APIClient` for a mutation.
    ///
    /// `signedOut`, `sessionExpired` and 401 are transient: the change waits for the user to sign
    /// in again instead of being thrown away.
    ///
    /// A `Retry-After` HTTP-date is read against the response's `Date` field (RFC 9110 §6.6.1, the
    /// server's clock, so a device clock that is off does not change the wait); `now` (the moment
    /// of receipt, device clock) is used only when the response has no valid `Date`.
    static func of(_ error: any Error, now: Date = Date()) -> FailureClass {
        if error is CancellationError { return .cancelled }
        guard let error = error as? NetworkError else { return .permanent }
        switch error {
        case .cancelled:
            return .cancelled
        case .offline, .networkUnavailable, .timedOut, .signedOut, .sessionExpired, .unauthorized, .tokenStoreFailed:
            return .transient(retryAfter: nil)
        case .transport(let urlError):
            return repeatsIdentically(urlError.code) ? .permanent : .transient(retryAfter: nil)
        case .backendUnavailable(_, let wait):
            return .transient(retryAfter: wait > .zero ? wait : nil)
        case .rateLimited(let retryAfter, let response):
            return .transient(retryAfter: retryAfter.map { wait($0, response: response, now: now) })
        case .server(let response):
            return .transient(retryAfter: response.retryAfter.map { wait($0, response: response, now: now) })
        case .conflict:
            return .conflict
        case .client(let response):
            switch response.statusCode {
            case 408: return .transient(retryAfter: response.retryAfter.map { wait($0, response: response, now: now) })
            case 412: return .conflict
            default: return .permanent
            }
        case .forbidden, .notFound, .unprocessable, .rejected, .decoding, .invalidRequest,
            .missingInterceptor, .undecodableResponse, .notCached, .streamBufferOverflow, .responseTooLarge, .redirectRefused:
            return .permanent
        }
    }

    /// Transport failures that sending the same request to the same server again would repeat
    /// (`URLError.Code.repeatsWhenSentAgain` in the core: a reply that is not HTTP, a refused URL,
    /// a redirect loop, a size limit, a refused certificate). Such a mutation is dead-lettered
    /// with its error instead of blocking its group for good; every other transport failure is
    /// transient.
    static func repeatsIdentically(_ code: URLError.Code) -> Bool { code.repeatsWhenSentAgain }

    /// The wait `retryAfter` asks for, at most a day: delta-seconds as given; an HTTP-date minus
    /// the response's `Date` (both on the server's clock), or minus `now` without one.
    private static func wait(_ retryAfter: RetryAfter, response: FailedResponse, now: Date) -> Duration {
        switch retryAfter {
        case .seconds(let seconds):
            return .seconds(max(0, min(seconds, 86_400)))
        case .date(let date):
            let sent = response.headers["Date"].flatMap { HTTPDate.parse($0.trimmingCharacters(in: .whitespaces)) }
            return .seconds(max(0, min(date.timeIntervalSince(sent ?? now), 86_400)))
        }
    }
}

/// The offline queue's backoff is Courier's `Backoff`.
@available(*, deprecated, renamed: "Backoff")
public typealias QueueBackoff = Backoff

extension Backoff {
    /// The offline queue's default: 1 s doubling to 5 minutes, equal jitter (half the delay
    /// fixed, half random: the request count stays logarithmic in the outage's length).
    public static let queue = Backoff(initialDelay: .seconds(1), maximumDelay: .seconds(300), jitter: .equal)

    /// The former `QueueBackoff(baseDelay:maxDelay:)`: equal jitter, doubling.
    @available(*, deprecated, message: "use Backoff(initialDelay:maximumDelay:jitter:) with jitter .equal")
    public init(baseDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(300)) {
        self.init(initialDelay: baseDelay, maximumDelay: max(baseDelay, maxDelay), jitter: .equal)
    }

    /// The wait after `failures` consecutive failures of a group (1 = first), never shorter than
    /// the server's `Retry-After`.
    func delay(afterFailures failures: Int, random: Double, retryAfter: Duration?) -> Duration {
        let jittered = delay(afterFailures: failures, random: random)
        if let retryAfter, retryAfter > jittered { return retryAfter }
        return jittered
    }
}
