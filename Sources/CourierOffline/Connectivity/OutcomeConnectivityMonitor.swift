import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// A ``ConnectivityMonitor`` fed by what real requests experience: the portable monitor (the
/// only one on Linux; on Apple platforms it complements `PathConnectivityMonitor` by noticing a
/// backend that is down while the path is fine).
///
/// Put its ``interceptor`` innermost in the client's pipeline so it sees every attempt, retries
/// included: `$0.interceptors = .standard() + [monitor.interceptor]`. It only observes: a request
/// is never held back because of the status.
///
/// | outcome | status |
/// |---|---|
/// | `notConnectedToInternet`, `dataNotAllowed`, `internationalRoamingOff`, `cannotFindHost`, `dnsLookupFailed` | ``ConnectivityStatus/noInternet`` |
/// | `cannotConnectToHost` (connection refused) | ``ConnectivityStatus/backendUnavailable`` |
/// | ``Thresholds/unavailableStatusRun`` consecutive 502/503/504 | ``ConnectivityStatus/backendUnavailable`` |
/// | ``Thresholds/timeoutRun`` consecutive time-outs or lost connections | ``ConnectivityStatus/backendUnavailable`` |
/// | `NetworkError.backendUnavailable` (the client's circuit breaker is open) | ``ConnectivityStatus/backendUnavailable`` |
/// | any other HTTP response | ``ConnectivityStatus/online`` (or ``ConnectivityStatus/realtimeDisconnected``) |
///
/// While the status is not reachable, an optional health probe (``startProbing(backoff:clock:random:probe:)``)
/// checks the backend with exponential backoff until it answers. Start it when reads wait for
/// the network through this monitor (`RetryPolicy.waitsForConnectivity`): a waiting read sends
/// nothing, so without a probe nothing tells the monitor the network is back and the read waits
/// until its deadline.
public final class OutcomeConnectivityMonitor: ConnectivityMonitor {
    /// How many consecutive bad outcomes change the status.
    public struct Thresholds: Sendable, Hashable {
        /// Consecutive 502/503/504 responses that mean the backend is down (default 3).
        public var unavailableStatusRun: Int
        /// Consecutive time-outs or lost connections that mean the backend is down (default 3).
        public var timeoutRun: Int

        /// Creates thresholds.
        public init(unavailableStatusRun: Int = 3, timeoutRun: Int = 3) {
            self.unavailableStatusRun = max(1, unavailableStatusRun)
            self.timeoutRun = max(1, timeoutRun)
        }
    }

    private struct State: Sendable {
        var unavailableRun = 0
        var timeoutRun = 0
        var transportDown: ConnectivityStatus?
        var realtimeConnected = true
        var probe: Task<Void, Never>?
    }

    private let broadcaster: StatusBroadcaster
    private let state = Locked(State())
    private let thresholds: Thresholds

    /// Creates a monitor that starts as ``ConnectivityStatus/online`` (nothing known to be wrong).
    public init(thresholds: Thresholds = Thresholds()) {
        self.thresholds = thresholds
        broadcaster = StatusBroadcaster(initial: .online)
    }

    deinit { state.current.probe?.cancel() }

    /// The latest status.
    public var status: ConnectivityStatus { broadcaster.status }

    /// The current status, then every change.
    public func statuses() -> AsyncStream<ConnectivityStatus> { broadcaster.stream() }

    /// The observing interceptor to append to the client's pipeline.
    public var interceptor: ConnectivityInterceptor { ConnectivityInterceptor(monitor: self) }

    // MARK: - Outcomes

    /// Records an HTTP response.
    public func record(statusCode: Int) {
        update { state in
            state.timeoutRun = 0
            if [502, 503, 504].contains(statusCode) {
                state.unavailableRun += 1
                if state.unavailableRun >= thresholds.unavailableStatusRun { state.transportDown = .backendUnavailable }
            } else {
                state.unavailableRun = 0
                state.transportDown = nil
            }
        }
    }

    /// Records a transport failure (`URLError`) or an open circuit breaker
    /// (`NetworkError.backendUnavailable`); other errors are ignored.
    public func record(error: any Error) {
        let code: URLError.Code
        switch error {
        case NetworkError.backendUnavailable:
            update { $0.transportDown = .backendUnavailable }
            return
        case let urlError as URLError: code = urlError.code
        case NetworkError.offline(let urlError): code = urlError.code
        case NetworkError.transport(let urlError): code = urlError.code
        case NetworkError.timedOut(let urlError): code = urlError?.code ?? .timedOut
        default: return
        }
        update { state in
            switch code {
            case .notConnectedToInternet, .dataNotAllowed, .internationalRoamingOff, .cannotFindHost, .dnsLookupFailed:
                state.transportDown = .noInternet
            case .cannotConnectToHost:
                state.transportDown = .backendUnavailable
            case .timedOut, .networkConnectionLost:
                state.timeoutRun += 1
                if state.timeoutRun >= thresholds.timeoutRun { state.transportDown = .backendUnavailable }
            default:
                break
            }
        }
    }

    /// Records whether the app's realtime channel is connected (``ConnectivityStatus/realtimeDisconnected``
    /// while HTTP works and it is not).
    public func recordRealtime(connected: Bool) {
        update { $0.realtimeConnected = connected }
    }

    private func update(_ change: (inout State) -> Void) {
        let status = state.withLock { state -> ConnectivityStatus in
            change(&state)
            return state.transportDown ?? (state.realtimeConnected ? .online : .realtimeDisconnected)
        }
        broadcaster.publish(status)
    }

    // MARK: - Health probe

    /// Probes the backend while the status is not reachable: waits `backoff.delay(afterFailures: n)`
    /// (1 s, 2 s, 4 s … jittered, capped), calls `probe`, and records its outcome (`true` =
    /// online). Stops probing while reachable and resumes when the status drops. Replaces an
    /// earlier probe; runs until ``stopProbing()`` or deallocation.
    ///
    /// - Parameters:
    ///   - backoff: The waits between probes.
    ///   - clock: The clock the waits use (inject a test clock).
    ///   - random: The jitter's random source, values in `0...1`.
    ///   - probe: Returns whether the backend answered (for example `GET /health` → 2xx).
    public func startProbing(
        backoff: Backoff = Backoff(initialDelay: .seconds(1), maximumDelay: .seconds(60), jitter: .equal),
        clock: any Clock<Duration> = ContinuousClock(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        probe: @escaping @Sendable () async -> Bool
    ) {
        let statuses = statuses()
        let task = Task { [weak self] in
            var failures = 0
            for await status in statuses {
                guard !status.isReachable else {
                    failures = 0
                    continue
                }
                // Probe until reachable; the stream's next element ends the loop iteration.
                while !Task.isCancelled {
                    guard let current = self?.status, !current.isReachable else { break }
                    failures += 1
                    let delay = backoff.delay(afterFailures: failures, random: random(), retryAfter: nil)
                    do { try await clock.sleep(for: delay) } catch { return }
                    guard let self, !self.status.isReachable else { break }
                    if await probe() {
                        self.update {
                            $0.transportDown = nil
                            $0.unavailableRun = 0
                            $0.timeoutRun = 0
                        }
                        failures = 0
                        break
                    }
                }
            }
        }
        state.withLock { state in
            state.probe?.cancel()
            state.probe = task
        }
    }

    /// Probes `path` of `client`'s environment with a `GET`: any response below 500 counts as
    /// reachable. Convenience for ``startProbing(backoff:clock:random:probe:)``.
    public func startProbing(
        client: APIClient, path: String = "/health",
        backoff: Backoff = Backoff(initialDelay: .seconds(1), maximumDelay: .seconds(60), jitter: .equal),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        startProbing(backoff: backoff, clock: clock) {
            let request = Request<HTTPResponse>.raw(
                .get, path,
                policy: EndpointPolicy.standard
                    .with(\.retry, .none).with(\.deadline, .seconds(10)).with(\.cache, .bypassCache))
            guard let response = try? await client.send(request) else { return false }
            return response.statusCode < 500
        }
    }

    /// Stops the health probe.
    public func stopProbing() {
        state.withLock { state in
            state.probe?.cancel()
            state.probe = nil
        }
    }
}

/// Reports every attempt's outcome to an ``OutcomeConnectivityMonitor``; changes nothing.
///
/// A call its client refuses before it gets here — `NetworkError.backendUnavailable` from the
/// circuit breaker or a server's `Retry-After` outside it — reaches the monitor too: the client
/// tells the interceptor how each failed call ended, wherever it sits in the pipeline.
public struct ConnectivityInterceptor: Interceptor, LaneParticipant {
    let monitor: OutcomeConnectivityMonitor

    /// None: it only observes.
    public var capabilities: PipelineCapabilities { [] }

    /// Passes the request on and records the response status or the transport error.
    public func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        do {
            let response = try await next(request)
            monitor.record(statusCode: response.statusCode)
            return response
        } catch {
            monitor.record(error: error)
            throw error
        }
    }

    package var observesCallFailures: Bool { true }

    /// Records a call refused before it reached this interceptor; the outcomes of calls that
    /// reached it were recorded on the way back.
    package func callFailed(_ failure: NetworkError) {
        if case .backendUnavailable = failure { monitor.record(error: failure) }
    }
}

extension OutcomeConnectivityMonitor: ConnectivityWaiting {
    /// Returns once the status is neither ``ConnectivityStatus/noInternet`` nor
    /// ``ConnectivityStatus/waitingForConnectivity`` (at once when it is neither now).
    public func waitForConnectivity() async { await broadcaster.waitForConnectivity() }

    /// While a call waits and the status is ``ConnectivityStatus/noInternet``, the status is
    /// ``ConnectivityStatus/waitingForConnectivity``.
    public func callIsWaiting(_ waiting: Bool) { broadcaster.callIsWaiting(waiting) }
}
