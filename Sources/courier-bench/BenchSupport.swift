import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CPU time (user + system) this process has used so far, in seconds (getrusage, RUSAGE_SELF).
/// The servers run in other processes, so this counts only the client's work.
func processCPUSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1_000_000 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// One measured run: CPU microseconds per request and wall-clock requests per second.
struct Measurement {
    let cpuMicrosPerRequest: Double
    let requestsPerSecond: Double
}

/// Runs `operation` `requests` times split over `concurrency` workers and measures the client's
/// CPU time per request and the throughput.
func measure(
    requests: Int, concurrency: Int, _ operation: @escaping @Sendable () async throws -> Void
) async throws -> Measurement {
    let perWorker = max(1, requests / concurrency)
    let startCPU = processCPUSeconds()
    let startWall = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                for _ in 0..<perWorker { try await operation() }
            }
        }
        try await group.waitForAll()
    }
    let wall = ContinuousClock.now - startWall
    let cpu = processCPUSeconds() - startCPU
    let total = Double(perWorker * concurrency)
    let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
    return Measurement(cpuMicrosPerRequest: cpu / total * 1_000_000, requestsPerSecond: total / wallSeconds)
}
