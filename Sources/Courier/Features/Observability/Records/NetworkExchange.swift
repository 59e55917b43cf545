import Foundation

/// One request and how it ended — the unit a ``NetworkExchangeRecorder`` (such as ``HARRecorder``)
/// receives from the ``LoggingInterceptor``. Everything in it is already redacted.
public struct NetworkExchange: Sendable, Hashable {
    /// How the exchange ended.
    public enum Outcome: Sendable, Hashable {
        /// A response arrived (any status).
        case response(ResponseRecord)
        /// No response: transport failure, cancellation or an interceptor's error.
        case failure(ErrorRecord)
    }

    /// The request as the interceptor saw it.
    public var request: RequestRecord
    /// The response or the error.
    public var outcome: Outcome
    /// Phase timings of the last attempt where the platform measures them (Apple
    /// `URLSessionTaskMetrics`); `nil` on Linux.
    public var timings: TaskTimings?
    /// How the HTTP cache answered, when a cache interceptor ran inside the logging interceptor.
    public var cacheOutcome: CacheOutcome?

    /// Creates an exchange.
    package init(request: RequestRecord, outcome: Outcome, timings: TaskTimings? = nil, cacheOutcome: CacheOutcome? = nil) {
        self.request = request
        self.outcome = outcome
        self.timings = timings
        self.cacheOutcome = cacheOutcome
    }

    /// The response record, when there was one.
    public var response: ResponseRecord? {
        if case .response(let response) = outcome { return response }
        return nil
    }

    /// The error record, when the exchange failed.
    public var error: ErrorRecord? {
        if case .failure(let error) = outcome { return error }
        return nil
    }

    /// Time from request to response or failure.
    package var duration: Duration {
        switch outcome {
        case .response(let response): return response.duration
        case .failure(let error): return error.duration
        }
    }
}

/// Receives every exchange a ``LoggingInterceptor`` records: HAR export, an in-app network
/// inspector, a test's assertions. Called synchronously on the request's task — keep it cheap and
/// thread-safe.
public protocol NetworkExchangeRecorder: Sendable {
    /// Stores or forwards `exchange`.
    func record(_ exchange: NetworkExchange)
}
