import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// Counts the events of a call.
private final class CountingMonitor: NetworkEventMonitor {
    private let count = Locked(0)
    var total: Int { count.current }
    func receive(_ event: NetworkEvent) { count.withLock { $0 += 1 } }
}

/// What lifecycle events cost (issue 27 item 4, "zero cost when none is attached"): CPU per call of
/// `.standard()` over an in-memory transport with no event monitor and with one monitor that drops
/// every event, and CPU per `emit` on a context without monitors — the only work events add to a
/// call with none (one slot read under the context's lock; the event itself is an autoclosure
/// never evaluated, so nothing is allocated). Rounds alternate the cases; the ratio is taken
/// within each round, so the machine's load affects both sides alike.
///
///     swift run -c release courier-bench --only events [--calls N] [--rounds R]
func runEventsBench(calls: Int, rounds: Int) async throws {
    let body = pipelineCostBody()
    let environment = APIEnvironment(name: "memory", baseURL: URL(string: "http://127.0.0.1:9")!)
    func client(_ monitors: [any NetworkEventMonitor]) -> APIClient {
        APIClient(environment: environment) {
            $0.transport = InstantTransport(body: body)  // the 2 KB JSON list: the client's own CPU only
            $0.interceptors = .standard()
            $0.eventMonitors = monitors
        }
    }
    let plain = client([])
    let monitored = client([DroppingEventMonitor()])
    let counter = CountingMonitor()
    _ = try await client([counter]).send(ListBenchItems())
    let eventsPerCall = counter.total

    // 100 emits per measured operation, so the per-emit figure is not the task hop's.
    let context = RequestContext(method: .get, pathTemplate: "/items")
    let emitsPerOperation = 100
    let emitOnly: @Sendable () async throws -> Void = {
        for attempt in 0..<emitsPerOperation { context.emit(.attemptStarted(attempt: attempt)) }
    }

    let cases: [(name: String, run: @Sendable () async throws -> Void)] = [
        ("no monitor", { _ = try await plain.send(ListBenchItems()) }),
        ("one no-op monitor", { _ = try await monitored.send(ListBenchItems()) }),
    ]
    for entry in cases { _ = try await measure(requests: max(200, calls / 10), concurrency: 1, entry.run) }
    var perCall = Array(repeating: [Double](), count: cases.count)
    var ratios: [Double] = []
    var perEmit: [Double] = []
    for _ in 0..<rounds {
        for (index, entry) in cases.enumerated() {
            perCall[index].append(try await measure(requests: calls, concurrency: 1, entry.run).cpuMicrosPerRequest * 1000)
        }
        ratios.append(perCall[1].last! / perCall[0].last!)
        let emits = try await measure(requests: calls, concurrency: 1, emitOnly)
        perEmit.append(emits.cpuMicrosPerRequest * 1000 / Double(emitsPerOperation))
    }
    print(
        "lifecycle events: CPU per call, .standard() over an in-memory transport, \(body.count) B JSON body "
            + "(\(calls) calls x \(rounds) rounds; min and median over rounds)")
    print("  case                          min ns/call   median ns/call")
    for (index, entry) in cases.enumerated() {
        let name = entry.name.padding(toLength: 28, withPad: " ", startingAt: 0)
        print("  " + name + String(format: " %12.0f %16.0f", perCall[index].min() ?? 0, median(perCall[index])))
    }
    print(String(format: "  monitor / no monitor, same round: min %.3f, median %.3f", ratios.min() ?? 0, median(ratios)))
    print("  events per call (a counting monitor): \(eventsPerCall)")
    let emit = (min: perEmit.min() ?? 0, median: median(perEmit))
    // Without monitors the client's own steps (start, prepared, end) test a local array; only the
    // pipeline's steps (attempt, head, timings: 3 per attempt) read the context's slot.
    print(
        String(
            format: "  emit without monitors (slot read, no event built): min %.1f ns, median %.1f ns per emit;"
                + " 3 per attempt = %.0f ns per call, %.2f%% of the no-monitor call (min)",
            emit.min, emit.median, emit.min * 3, emit.min * 3 / (perCall[0].min() ?? 1) * 100))
}
