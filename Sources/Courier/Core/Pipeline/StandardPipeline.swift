import Foundation

extension Array where Element == any Interceptor {
    /// Courier's recommended pipeline, in the recommended order, with the parts you pass. This is
    /// the one place the order is defined; every other mention refers here.
    ///
    /// ```
    /// RequestID → Logging → Metrics → Cache → Deduplication → Retry → Auth → Idempotency → Transport
    /// ```
    /// - **RequestID first**: one ID for the whole call, on every attempt and in every log line.
    /// - **Logging and Metrics outside Retry**: one log entry and one metrics event per call, with
    ///   the retry count (put a second `LoggingInterceptor` innermost to also log each attempt).
    ///   A streamed body (``APIClient/stream(_:options:)``, downloads, Server-Sent Events) adds one
    ///   ``NetworkLogEntry/Event-swift.enum/bodyEnd`` entry when it ends, with the bytes its
    ///   consumer read; its call's metrics event is emitted then, with that count.
    /// - **Cache outside Retry**: a hit skips retries entirely, and stale-if-error applies only once
    ///   retries are spent; de-duplication inside the cache so concurrent misses share one call.
    /// - **Retry outside Auth**: every attempt goes through Auth again and carries the current token.
    /// - **Idempotency innermost**: the key comes from the call's context, so it is the same on
    ///   every attempt.
    ///
    /// With no arguments this is the client's default pipeline: request IDs, retries and
    /// idempotency keys. Pass the parts your app has:
    ///
    /// <!-- sample: apple — OSLogNetworkLogger exists on Apple platforms only -->
    /// ```swift
    /// let client = APIClient(environment: .production) {
    ///     $0.interceptors = .standard(tokenManager: tokens, cache: HTTPCache(),
    ///                                 logger: OSLogNetworkLogger(subsystem: "com.example.app"))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - tokenManager: Adds ``AuthInterceptor`` (bearer tokens, single-flight refresh on 401).
    ///     The manager refreshes through the client's transport unless it was given its own.
    ///   - cache: Adds the HTTP cache and in-flight de-duplication (``HTTPCache/interceptors()``).
    ///     With `tokenManager` and the cache's default partition, the cache is cleared whenever the
    ///     manager's session ends (``HTTPCache/Configuration/partition``).
    ///   - logger: Adds a redacting ``LoggingInterceptor`` writing to this logger.
    ///   - redactor: What the logging interceptor, the context's records and decoding-error
    ///     snippets hide (``Redactor``); Courier's defaults when omitted. A custom one adds the
    ///     logging interceptor even without a logger.
    ///   - recorders: Exchange recorders for the logging interceptor, e.g. a ``HARRecorder``
    ///     (a logging interceptor is added for them even without a logger).
    ///   - metrics: Adds a ``MetricsInterceptor`` emitting one event per call to this sink.
    ///   - retry: The retry interceptor; the default uses `ContinuousClock`, real jitter and no
    ///     ``RetryDecider``.
    /// - Returns: The interceptors, outermost first, for ``APIClient/Configuration/interceptors``.
    public static func standard(
        tokenManager: TokenManager? = nil,
        cache: HTTPCache? = nil,
        logger: (any NetworkLogger)? = nil,
        redactor: Redactor = Redactor(),
        recorders: [any NetworkExchangeRecorder] = [],
        metrics: (any NetworkMetricsSink)? = nil,
        retry: RetryInterceptor = RetryInterceptor()
    ) -> [any Interceptor] {
        var pipeline: [any Interceptor] = [RequestIDInterceptor()]
        // A redactor of the app's own also shapes the context's records and error snippets, so it
        // gets a logging interceptor even without a logger.
        if logger != nil || !recorders.isEmpty || redactor != Redactor() {
            pipeline.append(LoggingInterceptor(logger: logger, redactor: redactor, recorders: recorders))
        }
        if let metrics { pipeline.append(MetricsInterceptor(sink: metrics)) }
        if let cache { pipeline.append(contentsOf: cache.interceptors()) }
        pipeline.append(retry)
        if let tokenManager {
            pipeline.append(AuthInterceptor(tokenManager: tokenManager))
            // One partition for every account: what a session cached never reaches the next.
            if let cache, !cache.configuration.partitionsByAccount {
                tokenManager.onSessionEnd { await cache.removeAll(partition: cache.currentPartition) }
            }
        }
        pipeline.append(IdempotencyInterceptor())
        return pipeline
    }
}
