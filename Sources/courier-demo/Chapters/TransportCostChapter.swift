import Foundation
import Courier
#if canImport(CourierCurl)
import CourierCurl
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The transports chapter: the same calls over `URLSessionTransport` and, on Linux,
/// `CurlTransport`, with the client's CPU time per request of each (`clock()`). Indicative only:
/// one short sequential run on whatever else the machine is doing; `scripts/bench`
/// (courier-bench) is the reference measurement.
func runTransportCostChapter(_ demo: Demo) async throws {
    demo.chapter("Transports: the same calls over URLSessionTransport and CurlTransport (client CPU per request)")
    var transports: [(name: String, make: @Sendable () -> any Transport)] = [
        ("URLSessionTransport", { URLSessionTransport() })
    ]
    #if canImport(CourierCurl)
    transports.append(("CurlTransport", { CurlTransport() }))
    #endif
    let calls = 200
    for transport in transports {
        // The default pipeline without the demo's logging: what is measured is the client and
        // its transport. The servers run in other processes, so their CPU is not counted.
        let client = APIClient(environment: demo.environment) { $0.transport = transport.make() }
        let item = Request<Data>.get("/items/1")
        for _ in 0..<10 { _ = try await client.send(item) }  // warm-up: connections, caches
        let cpuBefore = processCPUSeconds()
        let start = ContinuousClock.now
        for _ in 0..<calls { _ = try await client.send(item) }
        let wall = (ContinuousClock.now - start) / .milliseconds(1)
        let cpu = (processCPUSeconds() - cpuBefore) * 1_000_000 / Double(calls)
        demo.say(
            "\(transport.name.padding(toLength: 20, withPad: " ", startingAt: 0)) \(calls) × GET /items/1: "
                + "\(Int(cpu.rounded())) µs CPU per request, \(Int((wall / Double(calls) * 1000).rounded())) µs wall")
    }
    demo.say("indicative only: one sequential run, whole-process CPU (clock()), on a shared machine;")
    demo.say("the reference numbers come from scripts/bench (courier-bench: warm-up, repetitions, concurrency)")
}

/// CPU time (user + system) this process has used so far, in seconds: C's `clock()` (process CPU
/// time on Linux and Apple platforms).
private func processCPUSeconds() -> Double {
    Double(clock()) / Double(CLOCKS_PER_SEC)
}
