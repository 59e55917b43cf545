import Foundation
import Courier
import CourierRealtime
import CourierTransfers

// courier-bench --only fleet: a discrete-event simulation of N devices (default 100,000) during a
// full backend outage, driven by the library's own decision code — RetryPolicy's backoff, the
// RetryBudget ledger and CircuitBreaker state machine (FleetHostState, the same value
// RetryInterceptor uses), and the WebSocket and Server-Sent Events reconnect policies — on a
// virtual clock: no sockets, no threads or tasks per device.
//   [--clients N] [--call-interval S] [--capacity X] [--svg PATH] [--seed N]

/// The knobs of one run.
struct FleetScenario {
    var clients = 100_000
    /// Mean seconds between two calls of one device (Poisson).
    var callInterval = 10.0
    /// Backend capacity as a multiple of the steady request rate; above it requests get 503.
    var capacityFactor = 1.3
    var outageStart = 60.0
    var outageEnd = 120.0
    var duration = 300.0
    var seed: UInt64 = 42
    /// Budget and breaker on (the `.standard()` defaults) or off.
    var fleetSafety = true
}

/// What one run measured.
struct FleetResult {
    var perSecond: [Int]  // requests reaching the backend, HTTP and realtime
    var httpPerSecond: [Int]
    var realtimePerSecond: [Int]
    var callsDuringOutage = 0
    var httpAttemptsDuringOutage = 0
    var failedFastDuringOutage = 0
    var steadyRate = 0.0
    var recoveryPeak = 0
    var recoveryPeakSecond = 0
    var reconnectTimes: [Double] = []  // seconds after recovery when each device's realtime link came back
    var httpClosedTimes: [Double] = []  // seconds after recovery when each device sent HTTP normally again
    var events = 0
}

/// A fast deterministic random source (SplitMix64), one per run.
struct SplitMix {
    var state: UInt64
    mutating func next() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}

/// A min-heap of events ordered by time.
struct EventQueue {
    struct Event {
        var time: Double
        var client: Int32
        var kind: UInt8  // 0 call, 1 retry, 2 reconnect
        var retry: UInt8
    }
    private var heap: [Event] = []
    var isEmpty: Bool { heap.isEmpty }
    init(capacity: Int) { heap.reserveCapacity(capacity) }

    mutating func push(_ event: Event) {
        heap.append(event)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].time < heap[parent].time else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Event {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count, heap[left].time < heap[smallest].time { smallest = left }
                if right < heap.count, heap[right].time < heap[smallest].time { smallest = right }
                guard smallest != parent else { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top
    }
}

func simulateFleet(_ scenario: FleetScenario) -> FleetResult {
    let count = scenario.clients
    let seconds = Int(scenario.duration) + 1
    var result = FleetResult(
        perSecond: Array(repeating: 0, count: seconds), httpPerSecond: Array(repeating: 0, count: seconds),
        realtimePerSecond: Array(repeating: 0, count: seconds))
    var random = SplitMix(state: scenario.seed)
    let policy = RetryPolicy.default
    let webSocket = CourierRealtime.ReconnectPolicy.standard
    let feed = ServerSentEvents.ReconnectPolicy.standard
    let steadyRate = Double(count) / scenario.callInterval
    let capacity = Int(steadyRate * scenario.capacityFactor)

    var hosts = [FleetHostState](
        repeating: FleetHostState(
            budget: scenario.fleetSafety ? .standard : nil, breaker: scenario.fleetSafety ? .standard : nil),
        count: count)
    var connected = [Bool](repeating: true, count: count)
    var reconnectAttempt = [Int](repeating: 0, count: count)
    var blockedSince = [Double](repeating: -1, count: count)  // first fail-fast after the outage began
    var queue = EventQueue(capacity: count * 4)
    for client in 0..<count {
        queue.push(.init(time: -log(1 - random.next()) * scenario.callInterval, client: Int32(client), kind: 0, retry: 0))
    }
    var outageBegun = false

    /// The backend: refuses everything during the outage, and 503s what exceeds its capacity.
    func serve(_ time: Double, http: Bool, _ result: inout FleetResult) -> Bool {
        let second = min(seconds - 1, Int(time))
        result.perSecond[second] += 1
        if http { result.httpPerSecond[second] += 1 } else { result.realtimePerSecond[second] += 1 }
        if time >= scenario.outageStart, time < scenario.outageEnd { return false }
        return result.perSecond[second] <= capacity
    }

    func reconnectDelay(_ device: Int, _ attempt: Int) -> Double {
        device.isMultiple(of: 2)
            ? FleetBench.seconds(webSocket.delay(forAttempt: attempt, random: { random.next() }))
            : FleetBench.seconds(feed.delay(forAttempt: attempt, serverRetry: nil, random: random.next()))
    }

    while !queue.isEmpty {
        let event = queue.pop()
        let now = event.time
        guard now < scenario.duration else { break }
        result.events += 1
        let client = Int(event.client)
        let inOutage = now >= scenario.outageStart && now < scenario.outageEnd
        if !outageBegun, now >= scenario.outageStart {
            // Every realtime link drops at once; each device starts its reconnect policy.
            outageBegun = true
            for device in 0..<count {
                connected[device] = false
                reconnectAttempt[device] = 1
                queue.push(.init(time: now + reconnectDelay(device, 1), client: Int32(device), kind: 2, retry: 0))
            }
        }
        switch event.kind {
        case 2:  // a realtime reconnect attempt
            if serve(now, http: false, &result) {
                connected[client] = true
                reconnectAttempt[client] = 0
                if now >= scenario.outageEnd { result.reconnectTimes.append(now - scenario.outageEnd) }
            } else {
                reconnectAttempt[client] += 1
                queue.push(
                    .init(
                        time: now + reconnectDelay(client, reconnectAttempt[client]), client: event.client, kind: 2, retry: 0))
            }
            continue
        case 0:  // a new call; the next one is scheduled now
            queue.push(
                .init(time: now - log(1 - random.next()) * scenario.callInterval, client: event.client, kind: 0, retry: 0))
            if inOutage { result.callsDuringOutage += 1 }
        default:
            break
        }
        // An attempt of a call (first or retry), decided by the same FleetHostState as RetryInterceptor.
        let isRetry = event.kind == 1
        let at = FleetBench.duration(now)
        var isProbe = false
        switch hosts[client].admit(isRetry: isRetry, at: at) {
        case .allowed: break
        case .probe: isProbe = true
        case .open, .paused:
            if inOutage, !isRetry { result.failedFastDuringOutage += 1 }
            if now >= scenario.outageStart, blockedSince[client] < 0 { blockedSince[client] = now }
            continue
        }
        if inOutage { result.httpAttemptsDuringOutage += 1 }
        let ok = serve(now, http: true, &result)
        hosts[client].record(ok ? .success : .failure, isProbe: isProbe, at: at, random: random.next())
        if ok, now >= scenario.outageEnd, blockedSince[client] >= 0 {
            result.httpClosedTimes.append(now - scenario.outageEnd)
            blockedSince[client] = -2  // counted once
        }
        let retry = Int(event.retry)
        guard !ok, retry < policy.maxRetries else { continue }
        if hosts[client].refusalOfRetry(at: at) != nil { continue }
        let delay = FleetBench.seconds(policy.jitteredBackoff(forRetry: retry, random: random.next()))
        queue.push(.init(time: now + delay, client: event.client, kind: 1, retry: UInt8(retry + 1)))
    }
    let steadySeconds = result.perSecond[10..<Int(scenario.outageStart)]
    result.steadyRate = Double(steadySeconds.reduce(0, +)) / Double(steadySeconds.count)
    let after = Int(scenario.outageEnd)..<seconds - 1
    if let peak = after.max(by: { result.perSecond[$0] < result.perSecond[$1] }) {
        result.recoveryPeak = result.perSecond[peak]
        result.recoveryPeakSecond = peak
    }
    return result
}

/// Namespace for the helpers above when a local name shadows them.
enum FleetBench {
    static func duration(_ seconds: Double) -> Duration { .nanoseconds(Int64(seconds * 1e9)) }
    static func seconds(_ duration: Duration) -> Double {
        duration.benchSeconds
    }
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

func textChart(_ result: FleetResult, scenario: FleetScenario, bin: Int = 10, width: Int = 50) -> String {
    let bins = stride(from: 0, to: Int(scenario.duration), by: bin).map { start in
        Double(result.perSecond[start..<min(start + bin, result.perSecond.count)].reduce(0, +)) / Double(bin)
    }
    let top = max(bins.max() ?? 1, 1)
    var lines: [String] = []
    for (index, value) in bins.enumerated() {
        let start = index * bin
        let bar = String(repeating: "█", count: Int((value / top * Double(width)).rounded()))
        let phase = Double(start) >= scenario.outageStart && Double(start) < scenario.outageEnd ? "outage" : ""
        lines.append(
            String(
                format: "%4d s │%@ %6.1fk/s %@", start, bar.padding(toLength: width, withPad: " ", startingAt: 0), value / 1000,
                phase))
    }
    return lines.joined(separator: "\n")
}

func svgChart(_ results: [(String, FleetResult)], scenario: FleetScenario) -> String {
    let width = 800.0
    let height = 300.0
    let top = Double(results.flatMap(\.1.perSecond).max() ?? 1)
    var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width) + 60)" height="\(Int(height) + 40)" font-family="sans-serif" font-size="11">
        <rect x="\(60 + scenario.outageStart / scenario.duration * width)" y="0" width="\((scenario.outageEnd - scenario.outageStart) / scenario.duration * width)" height="\(height)" fill="#eee"/>
        <text x="2" y="12">\(Int(top)) req/s</text><text x="2" y="\(Int(height))">0</text>

        """
    let colors = ["#c0392b", "#2471a3"]
    for (index, (name, result)) in results.enumerated() {
        let points = result.perSecond.enumerated().map { second, value in
            String(format: "%.1f,%.1f", 60 + Double(second) / scenario.duration * width, height - Double(value) / top * height)
        }
        svg += "<polyline fill=\"none\" stroke=\"\(colors[index % 2])\" points=\"\(points.joined(separator: " "))\"/>\n"
        svg += "<text x=\"\(70 + index * 250)\" y=\"\(Int(height) + 30)\" fill=\"\(colors[index % 2])\">\(name)</text>\n"
    }
    return svg + "</svg>\n"
}

func runFleetBench(arguments argument: (String) -> String?) {
    var scenario = FleetScenario()
    if let clients = argument("--clients").flatMap(Int.init) { scenario.clients = max(10, clients) }
    if let interval = argument("--call-interval").flatMap(Double.init) { scenario.callInterval = max(0.1, interval) }
    if let capacity = argument("--capacity").flatMap(Double.init) { scenario.capacityFactor = max(0.1, capacity) }
    if let seed = argument("--seed").flatMap(UInt64.init) { scenario.seed = seed }
    print(
        "fleet: \(scenario.clients) devices, one call per \(scenario.callInterval) s each (Poisson), one realtime link each "
            + "(half WebSocket, half SSE, standard reconnect policies); backend capacity \(scenario.capacityFactor)× steady; "
            + "full outage \(Int(scenario.outageStart))–\(Int(scenario.outageEnd)) s")
    var runs: [(String, FleetResult)] = []
    for safety in [false, true] {
        var run = scenario
        run.fleetSafety = safety
        let start = ContinuousClock.now
        let result = simulateFleet(run)
        let elapsed = ContinuousClock.now - start
        let name = safety ? "with budget + breaker (defaults)" : "without budget + breaker"
        runs.append((name, result))
        let amplification = Double(result.httpAttemptsDuringOutage) / Double(max(1, result.callsDuringOutage))
        let httpSteady = Double(result.httpPerSecond[10..<Int(run.outageStart)].reduce(0, +)) / (run.outageStart - 10)
        let httpPeak = result.httpPerSecond[Int(run.outageEnd)..<Int(run.duration)].max() ?? 0
        print("")
        print("── \(name) — simulated in \(elapsed), \(result.events) events")
        print(textChart(result, scenario: run))
        print(
            String(
                format:
                    "HTTP amplification during the outage (requests reaching the backend ÷ calls made): %.2f× (%d ÷ %d; %d calls failed fast)",
                amplification, result.httpAttemptsDuringOutage, result.callsDuringOutage, result.failedFastDuringOutage))
        print(
            String(
                format: "recovery peak: %d req/s at %d s = %.2f× the steady %.0f req/s (HTTP alone: %d = %.2f× its steady %.0f)",
                result.recoveryPeak, result.recoveryPeakSecond, Double(result.recoveryPeak) / result.steadyRate,
                result.steadyRate, httpPeak, Double(httpPeak) / httpSteady, httpSteady))
        let times = result.reconnectTimes
        print(
            String(
                format:
                    "reconnect wave: %d links back; after recovery p1 %.1f s, p50 %.1f s, p99 %.1f s (spread p1–p99 %.1f s; policies' cap 30 s + jitter)",
                times.count, percentile(times, 0.01), percentile(times, 0.5), percentile(times, 0.99),
                percentile(times, 0.99) - percentile(times, 0.01)))
        if safety {
            let closed = result.httpClosedTimes
            print(
                String(
                    format: "breaker: %d devices back to normal HTTP after recovery; p50 %.1f s, p99 %.1f s",
                    closed.count, percentile(closed, 0.5), percentile(closed, 0.99)))
        }
    }
    if let path = argument("--svg") {
        do {
            try Data(svgChart(runs, scenario: scenario).utf8).write(to: URL(fileURLWithPath: path))
            print("\nSVG chart: \(path)")
        } catch {
            print("\ncould not write \(path): \(error)")
        }
    }
}
