import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Records redacted records of each request and its response or error in the
/// ``RequestContext``, writes them to a ``NetworkLogger``, and hands them to recorders such as
/// ``HARRecorder``.
///
/// **A streamed body** (``APIClient/stream(_:options:)``, downloads, Server-Sent Events) is logged
/// in two entries: the response entry when the head arrives (its size reads `streaming`), then a
/// ``NetworkLogEntry/Event-swift.enum/bodyEnd`` entry when the body ends, with the bytes its
/// consumer read and how the reading ended (read to the end, failed, or let go). The interceptor
/// counts the bytes as they pass and never reads the body itself. Recorders get the exchange when
/// the body ends, its ``ResponseRecord/bodySize`` being the bytes read; the context's
/// ``RequestContext/responseRecord`` describes the head (size 0).
///
/// **A body that does not decode** into the endpoint's `Response` fails the call although its
/// status was accepted: after the response entry, a ``NetworkLogEntry/Event-swift.enum/failure``
/// entry of kind `decoding` follows, once the client has tried to decode.
///
/// **Per call or per attempt is decided by position** — the interceptor logs each pass through it:
/// - Outside ``RetryInterceptor`` (the default place, right after ``RequestIDInterceptor``): one
///   request line and one response/error line per logical call; the response line says how many
///   retries it took. Headers added further in (`Authorization` by the auth interceptor,
///   `Idempotency-Key`) are not in this view.
/// - Innermost, just before the transport: one pair of lines per attempt, with exactly the headers
///   that were sent (redacted). Both placements can be used at once; they share what was redacted.
///
/// What is logged follows the endpoint's ``LoggingPolicy``, capped by `maximumDetail`:
/// ``LoggingPolicy/disabled`` logs and records nothing; ``LoggingPolicy/safe`` gives method, redacted
/// URL, status, duration, sizes and redacted headers; ``LoggingPolicy/debugSafe`` adds redacted,
/// truncated body previews. Header and body lines are written only when the logger's
/// ``NetworkLogger/minimumLevel`` is ``NetworkLogLevel/debug``; records and recorders get them
/// regardless.
///
/// **Cost**: nothing is redacted or formatted for an entry below the logger's level. Records are
/// built the first time something needs them — a logger that writes the entry, a recorder, or a
/// read of ``RequestContext/requestRecord``, ``RequestContext/responseRecord`` or
/// ``RequestContext/errorRecord`` — with the same content as if built at once.
///
/// <!-- sample: apple — OSLogNetworkLogger exists on Apple platforms only -->
/// ```swift
/// let client = APIClient(environment: .production) {
///     $0.interceptors = .standard(logger: OSLogNetworkLogger(subsystem: "com.example.app"), recorders: [har])
/// }
/// ```
public struct LoggingInterceptor: Interceptor {
    /// Where entries go; `nil` records records (and feeds recorders) without logging.
    package let logger: (any NetworkLogger)?
    /// How secrets are removed.
    package let redactor: Redactor
    /// The most any endpoint may log, whatever its policy says — e.g. ``LoggingPolicy/safe`` in
    /// release builds to keep bodies out of logs altogether. ``LoggingPolicy/debugSafe`` by default.
    package let maximumDetail: LoggingPolicy
    /// Receivers of every recorded exchange (HAR export, an in-app inspector).
    package let recorders: [any NetworkExchangeRecorder]
    /// The record builders of ``LoggingPolicy/safe`` and ``LoggingPolicy/debugSafe``, made once.
    private let builders: (safe: RecordBuilder, debugSafe: RecordBuilder)

    /// Creates the interceptor.
    ///
    /// - Parameters:
    ///   - logger: Where entries go; `nil` to record without logging.
    ///   - redactor: How secrets are removed; the default ``Redactor``.
    ///   - maximumDetail: Cap on every endpoint's ``LoggingPolicy``; `.debugSafe` by default.
    ///   - recorders: Receivers of each exchange, e.g. a ``HARRecorder``.
    public init(
        logger: (any NetworkLogger)?,
        redactor: Redactor = Redactor(),
        maximumDetail: LoggingPolicy = .debugSafe,
        recorders: [any NetworkExchangeRecorder] = []
    ) {
        self.logger = logger
        self.redactor = redactor
        self.maximumDetail = maximumDetail
        self.recorders = recorders
        builders = (
            RecordBuilder(redactor: redactor, includesBodies: false),
            RecordBuilder(redactor: redactor, includesBodies: true)
        )
    }

    public func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        let policy = Self.lesser(context.policy.logging, maximumDetail)
        guard policy != .disabled else { return try await next(request) }

        // Nothing is redacted or formatted here unless a logger will write the entry at its level
        // or a recorder takes the exchange: the journal keeps what was seen and builds records
        // when they are first read (also through `context.requestRecord` and its siblings).
        let builder = policy == .debugSafe ? builders.debugSafe : builders.safe
        let journal = context.recordJournal
        let requestIndex = journal.append(.request(request, builder, attempt: context.attempt + 1, timestamp: Date()))
        context.withRecords { $0.request = .pending(journal, requestIndex) }
        let minimumLevel = logger?.minimumLevel
        let verbose = minimumLevel.map { $0 <= .debug } ?? false
        if let logger, verbose, let requestRecord = journal.record(at: requestIndex, as: RequestRecord.self) {
            logger.log(LogFormatting.requestEntry(requestRecord, includesDetails: true))
        }

        let start = ContinuousClock.now
        do {
            var response = try await next(request)
            let duration = ContinuousClock.now - start
            let attempt = max(1, context.attempt)
            let index = journal.append(.response(response, builder, attempt: attempt, duration: duration))
            context.withRecords { $0.response = .pending(journal, index) }
            let streamed = response.hasStreamedBody
            let logs = minimumLevel.map { LogFormatting.level(ofStatus: response.statusCode) >= $0 } ?? false
            let exchange = ExchangeIndices(request: requestIndex, response: index)
            if logs, !verbose, recorders.isEmpty, let logger {
                // A summary line: the redacted URLs and the scrubbed path are all it needs; no
                // header is redacted.
                let summary = journal.summary(at: index, request: requestIndex)
                let line = LogFormatting.ResponseLine(
                    statusCode: response.statusCode,
                    method: request.httpMethod.map(HTTPMethod.init(rawValue:)) ?? context.method,
                    pathTemplate: summary.pathTemplate, duration: duration,
                    bodySize: streamed ? nil : response.data.count,
                    attempt: attempt, requestID: context.requestID, url: summary.url,
                    transportDuration: context.taskTimings?.total)
                logger.log(
                    LogFormatting.responseEntry(line, cacheOutcome: context.cacheOutcome, redirects: context.redirects.count)
                        .noting(context.retryRefusal))
            } else if logs || !recorders.isEmpty, let requestRecord = journal.record(at: requestIndex, as: RequestRecord.self),
                let responseRecord = journal.record(at: index, as: ResponseRecord.self)
            {
                let cacheOutcome = context.cacheOutcome
                if let logger, logs {
                    logger.log(
                        LogFormatting.responseEntry(
                            responseRecord, request: requestRecord, summary: journal.summary(at: index, request: requestIndex),
                            cacheOutcome: cacheOutcome,
                            redirects: context.redirects.count, includesDetails: verbose, streamed: streamed,
                            transportDuration: context.taskTimings?.total
                        ).noting(context.retryRefusal))
                }
                if !recorders.isEmpty, !streamed {
                    record(
                        NetworkExchange(
                            request: requestRecord, outcome: .response(responseRecord), timings: context.taskTimings,
                            cacheOutcome: cacheOutcome))
                }
            }
            if streamed, logger != nil || !recorders.isEmpty {
                response.body = countedBody(of: response, request: request, context: context, journal: journal, exchange)
            }
            if let logger, let minimumLevel, context.decodes(response) {
                // The client decodes after the pipeline: a body that does not decode fails the call.
                context.afterDecoding { failure in
                    guard let failure, LogFormatting.level(ofFailure: failure) >= minimumLevel else { return }
                    let errorIndex = journal.append(.error(failure, builder, attempt: attempt, duration: duration))
                    guard let requestRecord = journal.record(at: requestIndex, as: RequestRecord.self),
                        let errorRecord = journal.record(at: errorIndex, as: ErrorRecord.self)
                    else { return }
                    logger.log(LogFormatting.failureEntry(errorRecord, request: requestRecord))
                }
            }
            return response
        } catch {
            let index = journal.append(
                .error(error, builder, attempt: context.attempt, duration: ContinuousClock.now - start))
            context.withRecords { $0.error = .pending(journal, index) }
            let logs = minimumLevel.map { LogFormatting.level(ofFailure: error) >= $0 } ?? false
            guard logs || !recorders.isEmpty, let requestRecord = journal.record(at: requestIndex, as: RequestRecord.self),
                let errorRecord = journal.record(at: index, as: ErrorRecord.self)
            else { throw error }
            if let logger, logs {
                logger.log(LogFormatting.failureEntry(errorRecord, request: requestRecord).noting(context.retryRefusal))
            }
            if !recorders.isEmpty {
                record(
                    NetworkExchange(
                        request: requestRecord, outcome: .failure(errorRecord), timings: context.taskTimings,
                        cacheOutcome: context.cacheOutcome))
            }
            throw error
        }
    }

    func record(_ exchange: NetworkExchange) {
        for recorder in recorders { recorder.record(exchange) }
    }

    /// The less detailed of two policies (disabled < safe < debugSafe).
    static func lesser(_ lhs: LoggingPolicy, _ rhs: LoggingPolicy) -> LoggingPolicy {
        func rank(_ policy: LoggingPolicy) -> Int {
            switch policy {
            case .disabled: return 0
            case .safe: return 1
            case .debugSafe: return 2
            }
        }
        return rank(lhs) <= rank(rhs) ? lhs : rhs
    }
}
