import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import Courier
import CourierOffline
import CourierTesting

/// SIGKILLs a real process that enqueues and flushes (courier-offline-crash-helper) at 20
/// seeded-random moments, restarts it each time, lets it finish, and checks the server: every
/// acknowledged mutation applied exactly once, in order.
///
/// The only test here that waits in real time: a crash has to land at a moment of a real
/// process's life (mid-enqueue, mid-commit, mid-request). The moments come from a seeded
/// generator; the whole test takes a few seconds.
@Suite("Offline crash safety (reference server)")
struct CrashSafetyTests {
    /// SplitMix64: a tiny seeded generator, so the kill moments are the same on every run.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    struct HelperMissing: Error, CustomStringConvertible {
        var description: String {
            "courier-offline-crash-helper not found next to the test binary: build with `swift build --build-tests` (scripts/test does)"
        }
    }

    /// The helper executable: `COURIER_CRASH_HELPER`, else next to the test bundle.
    static func helperURL() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["COURIER_CRASH_HELPER"] { return URL(fileURLWithPath: path) }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("courier-offline-crash-helper")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        throw HelperMissing()
    }

    /// Starts the helper (not with Foundation.Process: its run() can crash a process with many
    /// sockets open, see ChildProcess); returns it and a task that ends with its termination status.
    static func launch(_ helper: URL, arguments: [String], output: URL) throws -> (ChildProcess, Task<Int32, Never>) {
        // The helper says why it failed on its standard error: kept next to its output (see `diagnostics`).
        let process = try ChildProcess.run(
            helper, arguments: arguments, standardOutput: output, standardError: output.appendingPathExtension("err"))
        return (process, Task { await process.terminationStatus })
    }

    /// The `E i` acknowledgements, and whether `READY` and `DONE` were printed.
    static func read(_ output: URL) -> (acks: [Int], ready: Bool, done: Bool) {
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        var acks: [Int] = []
        var ready = false
        var done = false
        for line in text.split(separator: "\n") {
            if line == "READY" { ready = true }
            if line == "DONE" { done = true }
            if line.hasPrefix("E "), let i = Int(line.dropFirst(2)) { acks.append(i) }
        }
        return (acks, ready, done)
    }

    /// What the helper wrote on its standard error (why it failed), for a failure message.
    static func diagnostics(_ output: URL) -> String {
        let text = (try? String(contentsOf: output.appendingPathExtension("err"), encoding: .utf8)) ?? ""
        return text.isEmpty ? "(the helper wrote nothing on standard error)" : text
    }

    /// Waits until the helper opened its queue (at most 30 s), then `milliseconds`, then kills it
    /// when it still runs; returns whether it did. The waits run on a thread of their own: on Swift's
    /// cooperative pool, which the parallel pass keeps busy, a sleeping task woke seconds late and the
    /// helper had finished its work before the kill (13 of 20 kills landed in a CI run).
    static func kill(_ process: ChildProcess, output: URL, millisecondsAfterReady milliseconds: Int) async -> Bool {
        await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            Thread.detachNewThread {
                var ready = false
                for _ in 0..<6000 where process.isRunning {
                    if read(output).ready {
                        ready = true
                        break
                    }
                    usleep(5000)
                }
                if ready { usleep(useconds_t(milliseconds * 1000)) }
                guard ready, process.isRunning else {
                    done.resume(returning: false)
                    return
                }
                process.send(SIGKILL)
                done.resume(returning: true)
            }
        }
    }

    @Test func sigkillAtTwentyMomentsLosesAndDuplicatesNothing() async throws {
        let helper = try Self.helperURL()
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-crash")
        // The server applies, then waits 20 ms before answering: a kill in that window leaves a
        // mutation the server has but the queue does not know was delivered.
        try await OfflineServer.control("POST", "/_mutations_config", namespace: namespace, json: ["delayAfterApply": 0.02])
        let base = try OfflineServer.baseURL(namespace: namespace).absoluteString
        // Enough work (at least 20 ms a mutation on the server) that the queue is still busy at
        // every one of the 20 kills, however fast or slow the machine.
        let total = 300
        var generator = SeededGenerator(state: 13)
        var nextStart = 0
        var killed = 0
        for run in 0..<20 {
            let output = dir.url.appendingPathComponent("run-\(run).out")
            let (process, status) = try Self.launch(
                helper,
                arguments: [
                    "--db", dir.path("queue.sqlite"), "--base-url", base, "--count", "\(total)", "--start", "\(nextStart)",
                ], output: output)
            let delay = 10 + Int(generator.next() % 200)
            if await Self.kill(process, output: output, millisecondsAfterReady: delay) { killed += 1 }
            _ = await status.value
            let acks = Self.read(output).acks
            // Acknowledged = committed: never enqueued again, so a lost one would be missing below.
            if let last = acks.last { nextStart = last + 1 }
        }
        let output = dir.url.appendingPathComponent("final.out")
        let (_, status) = try Self.launch(
            helper,
            arguments: [
                "--db", dir.path("queue.sqlite"), "--base-url", base, "--count", "\(total)", "--start", "\(nextStart)",
            ], output: output)
        let code = await status.value
        #expect(code == 0, "final helper: \(Self.diagnostics(output))")
        #expect(Self.read(output).done)

        let log = try await OfflineServer.log(namespace: namespace)
        #expect(killed >= 15, "only \(killed) of 20 runs were still alive when killed")
        #expect(log.applied.compactMap(\.key) == (0..<total).map { "m-\($0)" })
        #expect(log.byKey.count == total && log.byKey.values.allSatisfy { $0 == 1 })
        #expect(log.mismatches == 0)
        // At least one kill landed mid-request (applied on the server, not yet recorded by the
        // queue) and its replay was answered from the server's idempotency record.
        #expect(log.replays >= 1)
    }
}
