import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Courier
import CourierOffline
import CourierRealtime
import CourierTransfers
#if canImport(CourierCurl)
import CourierCurl
#endif

// courier-pool-probe: runs Courier's workloads against the real local servers in a process whose
// Swift concurrency pool has ONE thread per priority, while probe tasks on that pool measure how
// late they are scheduled. The pool-starvation test (Tests/CourierPoolStarvationTests) launches it.
//
//   COURIER_API_URL=… COURIER_WS_URL=… courier-pool-probe [--only NAME,NAME…]
//
// Output: one line per phase on stdout,
//   PHASE <name> <max lateness, ms: high medium low background> <extra threads: high medium low background> <ms taken>
// after a BASELINE line (threads each probe ran on while settling), then "DONE". Each workload
// runs `repeats` times in its phase (a blocking call is seen the more often it happens). Exit 0 after all phases ran (the test judges the figures), 1 when a workload failed
// (its error on stderr), 2 on bad arguments or a missing server variable.
//
// How the pool is starved (Linux). Swift's global executor on Linux enqueues jobs on
// swift-corelibs-libdispatch's global queues (it asks for DISPATCH_QUEUE_COOPERATIVE, which
// corelibs rejects, and falls back to the plain global queue of the job's priority). Each of those
// queues has its own thread pool as wide as `dispatch_hw_config(active_cpus)`, which corelibs reads
// once, in its load-time constructor, from the process's CPU affinity (pthread_getaffinity_np). No
// environment variable sets that width (LIBDISPATCH_COOPERATIVE_POOL_STRICT is Apple's libdispatch
// only), so this program re-executes itself pinned to one CPU: the new image's libdispatch sizes
// every pool at one thread, and `main` then restores the original affinity before any thread
// exists, so the threads still run on all CPUs. A library call that blocks that thread delays
// every job of its priority, and a probe ticking every 10 ms sees the delay.
//
// corelibs has one safety valve: once a second its workqueue monitor reads /proc/<tid>/stat of
// each pool thread and, when a queue has work and no thread in state R, starts another thread. A
// blocking call therefore shows as lateness of up to about a second, or (when the monitor hit
// first) as an extra thread: the probe counts, per priority, the threads its ticks ran on that it
// had not run on before the phase. Extra threads also appear when a thread waits briefly (a lock,
// a wake-up) at the moment of the check, so they are a hint, reported; lateness is the measure.
//
// Elsewhere (Apple's cooperative pool is already strict and as wide as the active CPUs), all but
// one pool thread are occupied on purpose by tasks that block on a semaphore for the whole run.

// MARK: - Pool width

#if os(Linux)
/// `sched_getaffinity`/`sched_setaffinity` (glibc declares them only under `_GNU_SOURCE`, which
/// Swift's Glibc module does not set).
typealias AffinityCall = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32

func affinityCall(_ name: String) -> AffinityCall {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { fail(2, "\(name) not found") }
    return unsafeBitCast(symbol, to: AffinityCall.self)
}

func schedGetAffinity(_ pid: pid_t, _ size: Int, _ set: inout cpu_set_t) -> Int32 {
    withUnsafeMutablePointer(to: &set) { affinityCall("sched_getaffinity")(pid, size, UnsafeMutableRawPointer($0)) }
}

func schedSetAffinity(_ pid: pid_t, _ size: Int, _ set: inout cpu_set_t) -> Int32 {
    withUnsafeMutablePointer(to: &set) { affinityCall("sched_setaffinity")(pid, size, UnsafeMutableRawPointer($0)) }
}

/// `gettid` (also `_GNU_SOURCE` only): kernel thread ids, never reused while the process runs
/// the way `pthread_t` addresses are.
let gettidCall: @convention(c) () -> pid_t = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "gettid") else { fail(2, "gettid not found") }
    return unsafeBitCast(symbol, to: (@convention(c) () -> pid_t).self)
}()

/// Re-executes this program pinned to its first allowed CPU (see the header), or, in the
/// re-executed image, restores the saved affinity. Returns only in the re-executed image.
func narrowThePool() {
    let variable = "COURIER_POOL_PROBE_AFFINITY"
    var set = cpu_set_t()
    let size = MemoryLayout<cpu_set_t>.size
    if let saved = ProcessInfo.processInfo.environment[variable] {
        // The saved mask, as hex bytes.
        var bytes = [UInt8](repeating: 0, count: size)
        var index = saved.startIndex
        var position = 0
        while index < saved.endIndex, position < size {
            let next = saved.index(index, offsetBy: 2, limitedBy: saved.endIndex) ?? saved.endIndex
            bytes[position] = UInt8(saved[index..<next], radix: 16) ?? 0
            index = next
            position += 1
        }
        withUnsafeMutableBytes(of: &set) { $0.copyBytes(from: bytes) }
        guard schedSetAffinity(0, size, &set) == 0 else { fail(2, "sched_setaffinity (restore) failed: errno \(errno)") }
        return
    }
    guard schedGetAffinity(0, size, &set) == 0 else { fail(2, "sched_getaffinity failed: errno \(errno)") }
    let original = withUnsafeBytes(of: &set) { Array($0) }
    guard let firstByte = original.firstIndex(where: { $0 != 0 }) else { fail(2, "empty CPU affinity") }
    let bit = original[firstByte].trailingZeroBitCount
    var single = [UInt8](repeating: 0, count: size)
    single[firstByte] = 1 << bit
    var pinned = cpu_set_t()
    withUnsafeMutableBytes(of: &pinned) { $0.copyBytes(from: single) }
    guard schedSetAffinity(0, size, &pinned) == 0 else { fail(2, "sched_setaffinity (pin) failed: errno \(errno)") }
    setenv(variable, original.map { String(format: "%02x", $0) }.joined(), 1)
    let arguments = CommandLine.arguments
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
    argv.append(nil)
    execv("/proc/self/exe", &argv)
    fail(2, "execv failed: errno \(errno)")
}
#else
/// Occupies all but one thread of the cooperative pool until the process exits.
func narrowThePool() {
    let held = DispatchSemaphore(value: 0)
    for _ in 0..<max(0, ProcessInfo.processInfo.activeProcessorCount - 1) {
        let started = DispatchSemaphore(value: 0)
        Task.detached(priority: .medium) {
            started.signal()
            held.wait()  // blocks a pool thread on purpose, for the whole run
        }
        started.wait()
    }
}
#endif

func fail(_ status: Int32, _ message: String) -> Never {
    FileHandle.standardError.write(Data("courier-pool-probe: \(message)\n".utf8))
    exit(status)
}

// MARK: - Probe

/// The probe's figures for the current phase. `@unchecked Sendable`: every field is read and
/// written with `lock` held.
final class Measurements: @unchecked Sendable {
    static let priorities: [TaskPriority] = [.high, .medium, .low, .background]

    private let lock = NSLock()
    private var maxLateness: [Duration]
    private var threads: [Set<UInt>]
    private var everSeen: [Set<UInt>]
    private var baseline: [Set<UInt>]

    init() {
        maxLateness = Array(repeating: .zero, count: Self.priorities.count)
        threads = Array(repeating: [], count: Self.priorities.count)
        everSeen = Array(repeating: [], count: Self.priorities.count)
        baseline = everSeen
    }

    func record(_ index: Int, lateness: Duration, thread: UInt) {
        lock.lock()
        defer { lock.unlock() }
        maxLateness[index] = max(maxLateness[index], lateness)
        threads[index].insert(thread)
        everSeen[index].insert(thread)
    }

    /// How many threads each priority's probe ran on so far.
    func threadCounts() -> [Int] {
        lock.lock()
        defer { lock.unlock() }
        return everSeen.map(\.count)
    }

    /// The phase's figures, and a fresh start for the next phase. An extra thread is one the
    /// probe of a priority ran on that it never ran on before this phase.
    func take() -> (lateness: [Duration], extraThreads: [Int]) {
        lock.lock()
        defer { lock.unlock() }
        let extra = zip(threads, baseline).map { $0.subtracting($1).count }
        let result = (maxLateness, extra)
        maxLateness = Array(repeating: .zero, count: Self.priorities.count)
        threads = Array(repeating: [], count: Self.priorities.count)
        baseline = everSeen
        return result
    }
}

let tick = Duration.milliseconds(10)
/// How many times each workload runs in its phase.
let repeats = 3

/// An identifier of the calling thread.
func currentThread() -> UInt {
    #if os(Linux)
    return UInt(gettidCall())
    #else
    return UInt(bitPattern: pthread_self())
    #endif
}

func startProbes(_ measurements: Measurements) -> [Task<Void, Never>] {
    Measurements.priorities.enumerated().map { index, priority in
        Task.detached(priority: priority) {
            let clock = ContinuousClock()
            var deadline = clock.now
            while !Task.isCancelled {
                deadline = deadline.advanced(by: tick)
                do { try await Task.sleep(until: deadline, tolerance: .zero, clock: clock) } catch { return }
                let now = clock.now
                measurements.record(index, lateness: now - deadline, thread: currentThread())
                // After a long stall, measure from now rather than replaying the missed ticks.
                if now - deadline > tick { deadline = now }
            }
        }
    }
}

// MARK: - Workloads

struct Echo: Decodable, Sendable { var method: String }
struct CountedUpload: Decodable, Sendable { var bytes: Int }
struct CachedResource: Decodable, Sendable {
    var name: String
    var serial: Int
}
struct WorkloadFailure: Error, CustomStringConvertible { var description: String }

func environmentURL(_ name: String) -> URL {
    guard let text = ProcessInfo.processInfo.environment[name], let url = URL(string: text) else {
        fail(2, "\(name) is not set: start the servers (scripts/servers start)")
    }
    return url
}

let apiURL = environmentURL("COURIER_API_URL")
let wsURL = environmentURL("COURIER_WS_URL")
let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("courier-pool-probe-\(UUID().uuidString)")

func namespace(_ prefix: String) -> String { "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())" }

func client(
    _ transport: any Transport, _ prefix: String, configure: (inout APIClient.Configuration) -> Void = { _ in }
) -> APIClient {
    let base = apiURL.appendingPathComponent("ns").appendingPathComponent(namespace(prefix))
    return APIClient(environment: APIEnvironment(name: prefix, baseURL: base)) { configuration in
        configuration.transport = transport
        configure(&configuration)
    }
}

/// The transports under test, by name.
func transports() -> [(String, () -> any Transport)] {
    var list: [(String, () -> any Transport)] = [("urlsession", { URLSessionTransport() })]
    #if canImport(CourierCurl)
    list.append(("curl", { CurlTransport() }))
    #endif
    return list
}

let noAuth = EndpointPolicy.standard.with(\.auth, .none)

func requests(_ transport: any Transport) async throws {
    let client = client(transport, "pool-req")
    try await withThrowingTaskGroup(of: Void.self) { group in
        for i in 0..<40 {
            group.addTask {
                let echo = try await client.send(Request<Echo>.post("/echo", body: ["i": i], policy: noAuth))
                guard echo.method == "POST" else { throw WorkloadFailure(description: "echo said \(echo.method)") }
            }
            if i % 4 == 3 { try await group.waitForAll() }
        }
        try await group.waitForAll()
    }
}

func download(_ transport: any Transport) async throws {
    let client = client(transport, "pool-dl")
    let destination = scratch.appendingPathComponent("download-\(UUID().uuidString).bin")
    let size = 4_000_000
    let response = try await client.download(Request<Void>.get("/media/\(size)", policy: noAuth), to: destination).value
    let attributes = try FileManager.default.attributesOfItem(atPath: response.value.path)
    guard (attributes[.size] as? NSNumber)?.intValue == size else { throw WorkloadFailure(description: "download size") }
}

/// A download whose reading must not need the pool: once the first bytes arrived, the pool's one
/// medium thread is blocked for 1 s on purpose (as in the control phase) while the server sends the
/// rest at loopback speed. Over URLSession on Linux (which cannot pause a task) a reader on the
/// pool fell 16 MiB behind within that second and the body failed with a buffer overflow; the
/// download then asked again with `Range` (measured: 2–4 requests). Its reader runs on a thread of
/// its own and holds the transfer instead: the server sees exactly one request, served whole.
func downloadWhilePoolBlocked(_ transport: any Transport) async throws {
    let prefix = namespace("pool-dl-blocked")
    let base = apiURL.appendingPathComponent("ns").appendingPathComponent(prefix)
    let client = APIClient(environment: APIEnvironment(name: prefix, baseURL: base)) { $0.transport = transport }
    let destination = scratch.appendingPathComponent("download-\(UUID().uuidString).bin")
    let size = 96 << 20
    let download = client.download(Request<Void>.get("/media/\(size)", policy: noAuth), to: destination)
    for await progress in download.progress where progress.completedBytes > 0 { break }
    await Task(priority: .medium) {
        _ = usleep(1_000_000)  // blocks the pool's medium thread on purpose
    }.value
    let response = try await download.value
    let attributes = try FileManager.default.attributesOfItem(atPath: response.value.path)
    guard (attributes[.size] as? NSNumber)?.intValue == size else { throw WorkloadFailure(description: "download size") }
    let (data, _) = try await URLSession.shared.data(from: base.appendingPathComponent("_stats"))
    let stats = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    let log = (stats?["downloads"] as? [String: Any])?["log"] as? [[String: Any]] ?? []
    guard log.count == 1, log.first?["range"] == nil || log.first?["range"] is NSNull else {
        throw WorkloadFailure(description: "the server saw \(log.count) requests, expected one without Range: \(log)")
    }
}

/// Where the probe writes its own input files: a serial queue, which libdispatch runs on a thread
/// of its own. Not `DispatchQueue.global()`: on Linux its threads are the ones Swift's global
/// executor runs tasks on, the pool this probe measures.
let setupQueue = DispatchQueue(label: "courier-pool-probe.setup")

func upload(_ transport: any Transport) async throws {
    let client = client(transport, "pool-up")
    let file = scratch.appendingPathComponent("upload-\(UUID().uuidString).bin")
    let size = 4 << 20
    // The probe's own setup: written on `setupQueue`, off the one-thread pool it measures (on a
    // loaded machine this 4 MiB write alone took over 250 ms on the pool).
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        setupQueue.async {
            continuation.resume(with: Result { try Data(repeating: 0x5a, count: size).write(to: file) })
        }
    }
    let policy = EndpointPolicy.authorizedUpload.with(\.auth, .none)
    let request = Request<CountedUpload>(
        method: .post, path: "/uploads/count", body: .file(file, contentType: "application/octet-stream"), policy: policy)
    let counted = try await client.upload(request).value
    guard counted.bytes == size else { throw WorkloadFailure(description: "server counted \(counted.bytes) bytes") }
}

/// `UploadManager`: staging copies the file into the manager's folder, and every change rewrites
/// its registry. A background upload handed to a session that does nothing with it (so only the
/// staging is measured, not an upload's own traffic) of 256 MiB: a copy on the pool would show.
func uploadManager() async throws {
    let file = scratch.appendingPathComponent("staged-\(UUID().uuidString).bin")
    let size = 256 << 20
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        setupQueue.async {
            continuation.resume(with: Result { try Data(repeating: 0x33, count: size).write(to: file) })
        }
    }
    let manager = try UploadManager(
        client: client(URLSessionTransport(), "pool-upload-manager"),
        directory: scratch.appendingPathComponent("uploads-\(UUID().uuidString)"),
        backgroundTransport: IdleBackgroundTransport())
    let id = try await manager.enqueue(
        fileAt: file, to: "/uploads/count", contentType: "application/octet-stream", mode: .background)
    try await manager.cancel(id)
}

/// A background session that takes every task and never runs it.
final class IdleBackgroundTransport: BackgroundTransport, Sendable {
    let events: AsyncStream<BackgroundTransferEvent> = AsyncStream { _ in }
    func startUpload(_ request: URLRequest, fromFile fileURL: URL, taskDescription: String) throws {}
    func startDownload(_ request: URLRequest, taskDescription: String) throws {}
    func runningTaskDescriptions() async -> [String] { [] }
    func cancelTask(withDescription taskDescription: String) async {}
}

func serverSentEvents(_ transport: any Transport) async throws {
    let client = client(transport, "pool-sse")
    let feed = client.events(
        Request<Void>.get(
            "/sse/pool", query: Query([URLQueryItem(name: "count", value: "20"), URLQueryItem(name: "interval", value: "0.02")]),
            policy: noAuth))
    var count = 0
    for try await _ in feed {
        count += 1
        if count == 20 { break }
    }
    guard count == 20 else { throw WorkloadFailure(description: "\(count) events") }
}

func cache(_ transport: any Transport) async throws {
    let storage = DiskCacheStorage(directory: scratch.appendingPathComponent("cache-\(UUID().uuidString)"))
    let cache = HTTPCache(storage: storage)
    let client = client(transport, "pool-cache") { $0.interceptors = cache.interceptors() }
    for round in 0..<3 {
        for i in 0..<20 {
            let request = Request<CachedResource>.get(
                "/cache/resource/r\(i)",
                query: Query([URLQueryItem(name: "cc", value: "max-age=600"), URLQueryItem(name: "etag", value: "1")]),
                policy: noAuth)
            let value = try await client.send(request)
            guard value.serial == 1 else {
                throw WorkloadFailure(description: "round \(round): r\(i) served \(value.serial) times")
            }
        }
    }
}

func webSocket() async throws {
    var configuration = WebSocketClient.Configuration(
        url: wsURL.appendingPathComponent("ns").appendingPathComponent(namespace("pool-ws")).appendingPathComponent("echo"))
    configuration.reconnect = .never
    let socket = WebSocketClient(configuration: configuration)
    let messages = socket.messages()
    await socket.connect()
    let count = 50
    let received = Task {
        var seen = 0
        for await _ in messages {
            seen += 1
            if seen == count { break }
        }
        return seen
    }
    let opened = ContinuousClock.now.advanced(by: .seconds(10))
    while await socket.state != .open {
        guard ContinuousClock.now < opened else { throw WorkloadFailure(description: "not open: \(await socket.state)") }
        try await Task.sleep(for: .milliseconds(10))
    }
    for i in 0..<count { try await socket.send(text: "message \(i)") }
    let timeout = Task {
        try? await Task.sleep(for: .seconds(10))
        received.cancel()
    }
    let seen = await received.value
    timeout.cancel()
    await socket.close()
    guard seen == count else { throw WorkloadFailure(description: "\(seen) of \(count) echoes") }
}

func offlineQueue() async throws {
    let client = client(URLSessionTransport(), "pool-offline") { $0.interceptors = .standard() }
    let path = scratch.appendingPathComponent("queue-\(UUID().uuidString).sqlite").path
    let queue = try await MutationQueue.open(path: path, client: client)
    for i in 0..<50 {
        try await queue.enqueue(Mutation.json(id: "m-\(i)", method: .post, path: "/mutations", body: ["i": i]))
    }
    for _ in 0..<100 {
        let report = try await queue.flush()
        if report.pending == 0 { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw WorkloadFailure(description: "the queue did not drain")
}

func tokenStore() async throws {
    let store = FileTokenStore(fileURL: scratch.appendingPathComponent("tokens-\(UUID().uuidString)/tokens.json"))
    let grant = RefreshTokenGrant.oauth2(tokenURL: apiURL.appendingPathComponent("auth/token"))
    for i in 0..<20 {
        let manager = TokenManager(store: store, grant: grant)
        try await manager.signIn(AuthTokens(accessToken: "a\(i)", refreshToken: "r\(i)"))
        await manager.reloadFromStore()
        guard try await manager.isSignedIn() else { throw WorkloadFailure(description: "not signed in after signIn") }
        if i % 2 == 1 { try await manager.signOut() }
    }
}

/// A deliberate blocking call on the pool: proves that the pool really is one thread wide (the
/// medium probe must see it), so a quiet workload means something. Medium: the priority the
/// workloads run at, and so the library's tasks they start.
func control() async throws {
    await Task(priority: .medium) {
        _ = usleep(1_500_000)  // blocks a pool thread on purpose
    }.value
}

// MARK: - Pool width check

/// Whether the medium pool runs two jobs at once: two jobs that spin for 30 ms each (state R, so
/// libdispatch's monitor never adds a thread for them), enqueued together, overlap in time only
/// when the pool has a second thread. A thread the monitor added earlier stays while work keeps
/// arriving (it exits after 5 s idle), so it is checked before every phase.
func poolIsWiderThanOne() async -> Bool {
    let spans = await withTaskGroup(of: (ContinuousClock.Instant, ContinuousClock.Instant).self) { group in
        for _ in 0..<2 {
            group.addTask(priority: .medium) {
                let start = ContinuousClock.now
                while ContinuousClock.now - start < .milliseconds(30) {}  // spins on purpose, never blocks
                return (start, ContinuousClock.now)
            }
        }
        var spans: [(ContinuousClock.Instant, ContinuousClock.Instant)] = []
        for await span in group { spans.append(span) }
        return spans
    }
    guard spans.count == 2 else { return false }
    return spans[0].0 < spans[1].1 && spans[1].0 < spans[0].1
}

// MARK: - Main

/// The control blocks once, not `repeats` times. Only the main task touches it.
nonisolated(unsafe) var controlRan = false

var phases: [(String, () async throws -> Void)] = [
    (
        "control-blocking-sleep",
        {
            if !controlRan {
                controlRan = true
                try await control()
            }
        }
    )
]
for (name, make) in transports() {
    phases.append(("requests-\(name)", { try await requests(make()) }))
    phases.append(("download-to-file-\(name)", { try await download(make()) }))
    phases.append(("download-while-pool-blocked-\(name)", { try await downloadWhilePoolBlocked(make()) }))
    phases.append(("upload-from-file-\(name)", { try await upload(make()) }))
    phases.append(("sse-\(name)", { try await serverSentEvents(make()) }))
    phases.append(("disk-cache-\(name)", { try await cache(make()) }))
}
phases.append(("websocket-echo", webSocket))
phases.append(("token-store-file", tokenStore))
phases.append(("upload-manager-staging", uploadManager))
phases.append(("offline-queue-sqlite", offlineQueue))

if let index = CommandLine.arguments.firstIndex(of: "--only") {
    guard index + 1 < CommandLine.arguments.count else { fail(2, "--only needs a list of phase names") }
    let wanted = Set(CommandLine.arguments[index + 1].split(separator: ",").map(String.init))
    phases = phases.filter { wanted.contains($0.0) }
}

narrowThePool()

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func milliseconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return String(format: "%.1f", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
}

let exitCode: Int32 = await Task(priority: .medium) {
    do {
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    } catch {
        fail(1, "cannot create \(scratch.path): \(error)")
    }
    defer { try? FileManager.default.removeItem(at: scratch) }
    let measurements = Measurements()
    var probes = startProbes(measurements)
    defer { for probe in probes { probe.cancel() } }
    // Let the probes settle, then start from zero.
    try? await Task.sleep(for: .milliseconds(300))
    say("BASELINE threads per priority: \(measurements.threadCounts().map(String.init).joined(separator: " "))")
    _ = measurements.take()
    for (name, run) in phases {
        // A thread added by the monitor (after a deliberate or a found block) would hide the next
        // phase's blocks: quiet the pool until it leaves.
        var attempts = 0
        while await poolIsWiderThanOne() {
            attempts += 1
            guard attempts <= 3 else {
                say("WIDE \(name)")
                break
            }
            for probe in probes { probe.cancel() }
            try? await Task.sleep(for: .seconds(6))
            probes = startProbes(measurements)
            try? await Task.sleep(for: tick * 5)
        }
        // The check's spinning delays the probes too: let them catch up before measuring.
        try? await Task.sleep(for: tick * 5)
        _ = measurements.take()
        let started = ContinuousClock.now
        do {
            for _ in 0..<repeats { try await run() }
        } catch {
            FileHandle.standardError.write(Data("courier-pool-probe: \(name) failed: \(error)\n".utf8))
            return 1
        }
        // One more tick, so a stall at the very end is recorded in this phase.
        try? await Task.sleep(for: tick * 3)
        let elapsed = ContinuousClock.now - started
        let (lateness, extra) = measurements.take()
        let figures = lateness.map(milliseconds) + extra.map(String.init) + [milliseconds(elapsed)]
        say("PHASE \(name) \(figures.joined(separator: " "))")
    }
    say("DONE")
    return 0
}.value
exit(exitCode)
