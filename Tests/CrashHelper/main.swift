import Foundation
import Courier
import CourierOffline

// courier-offline-crash-helper: the process the crash-safety test SIGKILLs.
//
//   courier-offline-crash-helper --db PATH --base-url URL --count N --start S [--prefix P]
//
// Also the two-process test's process: two of them run at once on one PATH, each with its own
// prefix (its lock retry is 50 ms so the test is quick).
//
// Opens the queue at PATH and prints "READY", then enqueues mutations P-S ..< P-N (P: "m" unless
// given; POST /mutations,
// body {"i": i}), printing "E i" on stdout after each enqueue returned (= committed), while the queue sends
// (sendsOnEnqueue). Then flushes until nothing is pending and prints "DONE". Exit 0 on success,
// 1 when the queue did not drain within 120 s of flushes (why: on standard error), 2 on bad arguments.

func argument(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

guard let path = argument("--db"), let base = argument("--base-url").flatMap(URL.init(string:)),
    let count = argument("--count").flatMap(Int.init), let start = argument("--start").flatMap(Int.init)
else {
    FileHandle.standardError.write(Data("usage: --db PATH --base-url URL --count N --start S\n".utf8))
    exit(2)
}

let client = APIClient(environment: APIEnvironment(name: "crash", baseURL: base)) {
    $0.interceptors = .standard()
}
let prefix = argument("--prefix") ?? "m"
var configuration = MutationQueue.Configuration()
configuration.drainLockRetryInterval = .milliseconds(50)
configuration.backoff = Backoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200), jitter: .equal)
do {
    let queue = try MutationQueue(path: path, client: client, configuration: configuration)
    say("READY")
    for i in start..<max(start, count) {
        let body = ["p": prefix, "i": "\(i)"]
        try await queue.enqueue(Mutation.json(id: "\(prefix)-\(i)", method: .post, path: "/mutations", body: body))
        say("E \(i)")
    }
    // Flushes until nothing is pending, for at most 120 s of wall clock (a flush waits for the
    // queue that holds the drain lock): a failure says how far it got.
    let clock = ContinuousClock()
    let started = clock.now
    var flushes = 0
    var last: FlushReport?
    var longest = Duration.zero
    while clock.now - started < .seconds(120) {
        let flushStarted = clock.now
        let report = try await queue.flush()
        longest = max(longest, clock.now - flushStarted)
        flushes += 1
        last = report
        if report.pending == 0 {
            say("DONE")
            exit(0)
        }
        try await Task.sleep(for: .milliseconds(25))
    }
    FileHandle.standardError.write(
        Data(
            "queue did not drain: \(flushes) flushes in \(clock.now - started) (longest \(longest)); last report: \(String(describing: last))\n"
                .utf8))
    exit(1)
} catch {
    FileHandle.standardError.write(Data("helper failed: \(error)\n".utf8))
    exit(1)
}
