import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import CourierTesting

/// Library code must never block a thread of Swift's concurrency pool (issue 22 §2). This test
/// runs `courier-pool-probe` (Tests/PoolProbe), a separate process whose pool is one thread wide
/// per priority (its header says how: pinned to one CPU while libdispatch sizes its pools, then
/// unpinned), against the real local servers. Probe tasks at each priority tick every 10 ms on
/// `ContinuousClock` while the workloads run one after another: requests, a download to a file,
/// an upload from a file, a Server-Sent Events feed and the HTTP cache's disk storage over
/// `URLSessionTransport` and `CurlTransport` (and a download that must go on, in one request, while
/// the pool is blocked on purpose), a WebSocket echo, the `FileTokenStore` through
/// `TokenManager`, the offline `MutationQueue` (SQLite) and `UploadManager` staging a 256 MiB file.
///
/// A separate process, because the suite's other tests share this process's pool: their work
/// would show as lateness here, and a pool narrowed for this test would slow them.
///
/// Per workload the probe reports its largest lateness per priority and the pool threads that
/// appeared (libdispatch on Linux adds one when every thread of a queue with work is off the CPU
/// at its once-a-second check: a hint, also set off by a brief wait at that moment, so reported
/// and not judged). A workload passes below 250 ms of lateness: a blocked SQLite busy timeout, a synchronous libcurl call or a semaphore waiting
/// for the network is seconds; a debug build's busiest pool job on a loaded 2-core machine is tens
/// of milliseconds. The first phase blocks each priority's thread on purpose for 1.5 s and must
/// be seen, or the pool was not starved and the rest proves nothing.
@Suite("Concurrency pool starvation (one-thread pool, real servers)")
struct PoolStarvationTests {
    /// The largest lateness a workload may cause.
    static let bound = 250.0
    /// Workloads measured and reported but not judged, with the reason (none today: the offline
    /// queue runs SQLite on its own serial executor).
    static let reportOnly: [String: String] = [:]
    /// Phases that block the pool's thread on purpose, as the control does, to show that a
    /// workload needs no pool thread to go on: a download read while the pool is blocked for 1 s
    /// (judged by the probe itself, which fails unless the server saw exactly one request).
    static func blocksOnPurpose(_ name: String) -> Bool { name.hasPrefix("download-while-pool-blocked-") }

    struct Phase: CustomStringConvertible {
        var name: String
        /// Largest lateness per priority (high, medium, low, background), in milliseconds.
        var lateness: [Double]
        /// Threads a probe ran on that it had not run on before, per priority.
        var extraThreads: [Int]
        /// How long the phase took, in milliseconds.
        var milliseconds: Double

        var maxLateness: Double { lateness.max() ?? 0 }
        var description: String {
            "\(name): max lateness \(lateness.map { String(format: "%.1f", $0) }.joined(separator: "/")) ms "
                + "(high/medium/low/background), extra threads \(extraThreads.map(String.init).joined(separator: "/")), "
                + "\(String(format: "%.2f", milliseconds / 1000)) s"
        }
    }

    struct HelperMissing: Error, CustomStringConvertible {
        var description: String {
            "courier-pool-probe not found next to the test binary: build with `swift build --build-tests` (scripts/test does)"
        }
    }

    /// The helper executable: `COURIER_POOL_PROBE`, else next to the test bundle.
    static func helperURL() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["COURIER_POOL_PROBE"] { return URL(fileURLWithPath: path) }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("courier-pool-probe")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        throw HelperMissing()
    }

    /// Runs the helper to its end (at most `limit`); returns its status, stdout and stderr.
    static func run(_ helper: URL, limit: Duration) async throws -> (status: Int32, output: String, errors: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-pool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out")
        let errors = folder.appendingPathComponent("err")
        // Not Foundation.Process: its run() can crash a process with many sockets open (ChildProcess).
        let process = try ChildProcess.run(helper, standardOutput: output, standardError: errors)
        let timeout = Task {
            try await Task.sleep(for: limit)
            process.send(SIGTERM)
        }
        let status = await process.terminationStatus
        timeout.cancel()
        let read = { (url: URL) in (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
        return (status, read(output), read(errors))
    }

    static func phases(_ output: String) -> [Phase] {
        output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 11, fields[0] == "PHASE" else { return nil }
            let numbers = fields[2...].compactMap(Double.init)
            guard numbers.count == 9 else { return nil }
            return Phase(
                name: fields[1], lateness: Array(numbers[0..<4]), extraThreads: numbers[4..<8].map { Int($0) },
                milliseconds: numbers[8])
        }
    }

    /// Run by `scripts/test` in its quiet pass, alone: inside the parallel pass the machine's own
    /// load (a thousand tests, a build beside them) made honest workloads 250 ms late (a curl
    /// upload from a file, 256 ms, in a run where it measures 14-28 ms alone).
    @Suite("on a quiet machine") struct OnAQuietMachine {
        @Test(
            "no workload blocks the one thread of a starved pool: probe lateness < 250 ms",
            .enabled(if: ProcessInfo.processInfo.environment["COURIER_TRANSPORT"] != "curl", "it runs both transports itself"))
        func libraryWorkloadsNeverBlockAPoolThread() async throws {
            let helper = try PoolStarvationTests.helperURL()
            // The helper itself bounds every wait it makes; this only catches a hang of the whole run.
            let (status, output, errors) = try await PoolStarvationTests.run(helper, limit: .seconds(240))
            let phases = PoolStarvationTests.phases(output)
            for phase in phases { print("pool-starvation: \(phase)") }
            try #require(status == 0 && output.contains("DONE"), "courier-pool-probe exit \(status):\n\(output)\n\(errors)")

            let wide = output.split(separator: "\n").filter { $0.hasPrefix("WIDE ") }.map { $0.dropFirst(5) }
            #expect(wide.isEmpty, "the pool stayed wider than one thread before \(wide): those phases prove nothing")
            let control = try #require(phases.first { $0.name == "control-blocking-sleep" })
            // The medium pool's only thread slept 1.5 s: its probe is late by that, or by the time to
            // libdispatch's next check, which then adds a thread.
            #expect(
                control.lateness[1] >= PoolStarvationTests.bound || control.extraThreads[1] > 0,
                "the deliberate 1.5 s block went unseen: the pool was not starved, so this test proves nothing (\(control))")

            for phase in phases where phase.name != control.name && !PoolStarvationTests.blocksOnPurpose(phase.name) {
                if let reason = PoolStarvationTests.reportOnly[phase.name] {
                    print("pool-starvation: \(phase.name) reported, not judged: \(reason)")
                    continue
                }
                #expect(
                    phase.maxLateness < PoolStarvationTests.bound,
                    "\(phase) — a library call blocked the pool's only thread")
            }
        }
    }
}
