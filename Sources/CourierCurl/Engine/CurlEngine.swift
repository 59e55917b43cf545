#if canImport(CCurl)
import CCurl
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One libcurl multi handle driven through libcurl's socket interface (`curl_multi_socket_action`)
/// by one thread waiting on a poller (epoll, kqueue) for the sockets libcurl names.
///
/// Every call on the multi handle, and on an easy handle while it is added to it, happens under
/// `lock`. The engine thread holds it except while it waits, so a calling task starts its own
/// transfer (``start(_:)``): it adds the handle and lets libcurl send the request at once, and the
/// transfer's socket joins the poller while the engine thread keeps waiting — no wake-up of that
/// thread per request. Everything else other threads ask for (cancel, resume a paused transfer,
/// retire) goes through ``submit(_:)``: a queue of commands and a wake-up of the waiting thread.
/// The thread starts with the first transfer and ends after ``retire()`` (when its transport is
/// released or reset) once the transfers still running have ended.
final class CurlEngine: @unchecked Sendable {
    // @unchecked: the multi handle, `running`, `deadline`, `waitingUntil`, `retiring`, `dirty`
    // and every running transfer are guarded by `lock`; `commands`, `pendingStarts`, `threadStarted` and
    // `exited` by `commandLock`; `idleHandles` and `shuttingDown` by `poolLock`. Order: lock, then
    // commandLock or poolLock.

    /// What other threads ask the engine thread to do.
    enum Command {
        /// Abort a transfer (the task was cancelled or the consumer went away).
        case cancel(CurlTransfer)
        /// The consumer drained the stream buffer: continue a paused download.
        case resume(CurlTransfer)
        /// The request body stream has bytes (or its end) again: continue a paused upload.
        case resumeUpload(CurlTransfer)
        /// Stop the thread once the running transfers have finished.
        case retire
    }

    private let multi: UnsafeMutableRawPointer
    /// The cookie store every transfer of this engine uses (the transport's when the engine was
    /// made; a session reset makes a new engine with a new store), held as long as the engine so
    /// it outlives every easy handle attached to it.
    let cookies: CurlCookieShare?
    private let lock = NSLock()
    private let commandLock = NSLock()
    private let poolLock = NSLock()
    private var commands: [Command] = []
    /// Transfers whose callers found `lock` busy: the holder adds them before it lets go.
    private var pendingStarts: [CurlTransfer] = []
    private var queuedStartCount = 0
    private var threadStarted = false
    private var exited = false
    private var idleHandles: [UnsafeMutableRawPointer] = []
    private var shuttingDown = false
    private var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var retiring = false
    /// Streamed transfers holding bytes not yet handed to their consumer.
    private var dirty: [CurlTransfer] = []
    /// Results for waiting callers, resumed once `lock` is released (a resumed caller that
    /// starts its next request at once then finds the lock free).
    private var outbox: [Delivery] = []
    /// Requests that left for the network, reported once `lock` is released (the reporter runs the
    /// caller's `onStart` hook, which must not run under the lock).
    private var startedRequests: [RequestStartReporter] = []
    private var idleConnections = CurlIdleConnections()
    /// How many kept connections one transfer may find unusable before it fails.
    private static let maximumUnusableConnections = 8

    /// Why ``start(_:)`` refused a transfer: the engine has ended (its transport was reset), and
    /// the transfer never reached the network.
    struct Ended: Error {}

    /// A caller's result on its way out.
    struct Delivery {
        let continuation: CheckedContinuation<HTTPResponse, any Error>
        let result: Result<HTTPResponse, any Error>
    }
    /// libcurl's timer (`CURLMOPT_TIMERFUNCTION`): when to call `curl_multi_socket_action` with
    /// `CURL_SOCKET_TIMEOUT`, in milliseconds on the monotonic clock; `nil` when none.
    private var deadline: Int64?
    /// While the engine thread waits: when it wakes by itself.
    private var waitingUntil: Int64?
    private let poller: Int32
    /// The read and write ends of the wake-up channel (the same eventfd on Linux).
    private let waker: (read: Int32, write: Int32)

    /// Easy handles kept for reuse (each keeps its buffers; connections live in the multi handle).
    private static let maximumIdleHandles = 64
    /// The longest wait of the engine thread without a timer of libcurl's (milliseconds).
    private static let longestWait: Int64 = 1000

    /// `CURLMOPT_MAXCONNECTS`: how many connections (busy and idle) the multi handle's pool holds
    /// before it closes the oldest idle one as a transfer ends. libcurl's default is 4 per easy
    /// handle added at that moment, and this engine adds a handle only while its request runs:
    /// at 16 requests in flight, each moment when only one handle was added (the callers busy
    /// with their responses) shrank the pool to 4 and closed kept-alive connections, and the next
    /// requests opened new ones (issue 25: 88-133 new connections per 3000 requests at c16 with
    /// 6 per host; libcurl's verbose log said "Connection cache is full, closing the oldest one"
    /// once per reconnect). A fixed size keeps every connection the host limit allows, for
    /// several hosts: 4 hosts at the limit, at least 32; 256 without a host limit.
    static func connectionCacheSize(perHost: Int) -> Int {
        perHost > 0 ? max(32, min(perHost, 1 << 16) * 4) : 256
    }

    /// - Parameters:
    ///   - maximumConnectionsPerHost: `CURLMOPT_MAX_HOST_CONNECTIONS` (0 = no limit).
    ///   - cookies: The cookie store every transfer uses, or `nil` for none.
    init(maximumConnectionsPerHost: Int, cookies: CurlCookieShare?) {
        _ = CurlGlobal.initialized
        self.cookies = cookies
        multi = curl_multi_init()
        poller = ccurl_poller_create()
        var fds: [Int32] = [-1, -1]
        if ccurl_waker_create(&fds) != 0 { fds = [-1, -1] }
        waker = (fds[0], fds[1])
        if waker.read >= 0 { _ = ccurl_poller_watch(poller, waker.read, Int32(CURL_POLL_IN), 0) }
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maximumConnectionsPerHost)
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, Self.connectionCacheSize(perHost: maximumConnectionsPerHost))
        // HTTP/2 multiplexing (the default since 7.62; stated for clarity).
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        _ = ccurl_multi_setopt_socket_callback(multi, Self.socketCallback)
        _ = ccurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, userdata)
        _ = ccurl_multi_setopt_timer_callback(multi, Self.timerCallback)
        _ = ccurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, userdata)
    }

    /// An easy handle from the pool (reset to defaults), or a new one; `nil` only when libcurl
    /// cannot allocate one.
    ///
    /// - Parameter receiveBufferSize: libcurl's receive buffer for the transfer
    ///   (`CURLOPT_BUFFERSIZE`, bytes), or `nil` for libcurl's default (16 KiB). libcurl 7.88 keeps
    ///   a transfer's buffer when the transfer ended on an HTTP/2 connection another transfer still
    ///   used (its `multi_done` returns early), and refuses a new size while it has one
    ///   (`CURLE_BAD_FUNCTION_ARGUMENT`); such a pooled handle is replaced by a new one.
    func makeHandle(receiveBufferSize: Int? = nil) -> UnsafeMutableRawPointer? {
        let reused: UnsafeMutableRawPointer? = poolLock.withLock { idleHandles.popLast() }
        if let reused {
            curl_easy_reset(reused)
            // A transfer that never ran (cancelled before its start) leaves its CURLOPT_RESOLVE list,
            // freed since, in libcurl 7.88's data->state.resolve; setting the option to NULL clears it.
            _ = ccurl_easy_setopt_slist(reused, CURLOPT_RESOLVE, nil)
            if Self.setReceiveBuffer(receiveBufferSize, on: reused) { return reused }
            curl_easy_cleanup(reused)
        }
        guard let fresh = curl_easy_init() else { return nil }
        guard Self.setReceiveBuffer(receiveBufferSize, on: fresh) else {
            curl_easy_cleanup(fresh)
            return nil
        }
        return fresh
    }

    /// Sets `CURLOPT_BUFFERSIZE` when `size` is given; whether libcurl took it.
    private static func setReceiveBuffer(_ size: Int?, on handle: UnsafeMutableRawPointer) -> Bool {
        guard let size else { return true }
        return ccurl_easy_setopt_long(handle, CURLOPT_BUFFERSIZE, size) == CURLE_OK
    }

    /// Returns an easy handle that is not added to the multi handle to the pool.
    func recycle(_ handle: UnsafeMutableRawPointer) {
        let kept: Bool = poolLock.withLock {
            guard !shuttingDown, idleHandles.count < Self.maximumIdleHandles else { return false }
            idleHandles.append(handle)
            return true
        }
        if !kept { curl_easy_cleanup(handle) }
    }

    /// Starts a configured transfer: on the calling thread when the engine's lock is free (it adds
    /// the transfer to the multi handle and lets libcurl begin — on a kept-alive connection the
    /// request is sent before this returns), otherwise by whoever holds the lock.
    ///
    /// A caller never waits for the lock: while the engine thread handles a batch of responses, or
    /// another caller starts its own transfer, this one is queued (`pendingStarts`) and the holder
    /// adds it before it lets go — the engine thread before it waits for sockets, a caller right
    /// after it unlocked. Under concurrency, a caller blocked on the lock cost a futex sleep and
    /// wake-up per request (strace at c16: 1.3 lock waits per request), and held a thread of the
    /// cooperative pool meanwhile. Only a caller that finds the engine ended takes the lock
    /// (briefly: nothing runs on an ended engine) to hand its transfer back. The engine thread is
    /// woken only when libcurl's timer now fires before that thread would wake.
    func start(_ transfer: CurlTransfer) {
        if lock.try() {
            startHoldingLock(transfer)
            return
        }
        let queued: Bool = commandLock.withLock {
            if exited { return false }
            startThreadIfNeeded()
            pendingStarts.append(transfer)
            queuedStartCount += 1
            return true
        }
        if queued {
            // The holder may have let go between the failed try and the push: take over if so.
            if lock.try() { startHoldingLock(nil) }
        } else {
            lock.lock()
            startHoldingLock(transfer)
        }
    }

    /// How many starts were queued because the lock was busy (for tests).
    var queuedStarts: Int { commandLock.withLock { queuedStartCount } }

    /// Runs `body` holding the engine's lock, then lets go as a caller does: adding the starts
    /// queued meanwhile. Tests only (from a thread of their own, never the cooperative pool): it
    /// shows that callers queue their start instead of waiting for the lock.
    func holdingLock(_ body: () -> Void) {
        lock.lock()
        body()
        startHoldingLock(nil)
    }

    /// Adds `transfer` (when given) and every queued start, lets libcurl begin them, then releases
    /// `lock` and resumes the callers whose results are ready. Called with `lock` held; repeats
    /// while starts queued meanwhile find the lock free.
    private func startHoldingLock(_ transfer: CurlTransfer?) {
        var first = transfer
        while true {
            let (accepted, queued, cancels): (Bool, [CurlTransfer], [CurlTransfer]) = commandLock.withLock {
                if exited { return (false, [], []) }
                if first != nil { startThreadIfNeeded() }
                defer { pendingStarts.removeAll(keepingCapacity: true) }
                return (true, pendingStarts, Self.cancelled(in: commands))
            }
            if accepted {
                // A cancel the engine thread has not read yet stops a start added here: the
                // request is never sent (the thread handles the command later, finding nothing).
                for transfer in cancels { transfer.isCancelled = true }
                if let first { add(first) }
                for transfer in queued { add(transfer) }
                runTimer()
                collectFinished()
                flushDirty()
            } else if let first {
                // The engine has ended (the transport was reset meanwhile): the caller starts the
                // request again on the transport's current engine.
                refuse(first)
            }
            first = nil
            let wake = waitingUntil.map { waiting in deadline.map { $0 < waiting } ?? false } ?? false
            let ready = takeOutbox()
            lock.unlock()
            if wake { signal() }
            resume(ready)
            let more = commandLock.withLock { !pendingStarts.isEmpty }
            guard more, lock.try() else { return }
        }
    }

    /// The transfers `commands` cancel (usually none: a cancel is rare next to a start).
    private static func cancelled(in commands: [Command]) -> [CurlTransfer] {
        guard !commands.isEmpty else { return [] }
        return commands.compactMap { command in
            if case .cancel(let transfer) = command { transfer } else { nil }
        }
    }

    /// Fails a transfer the ended engine will not run (under `lock`).
    private func refuse(_ transfer: CurlTransfer) {
        transfer.refuse()
        transfer.release()
        curl_easy_cleanup(transfer.handle)
    }

    /// Queues a caller's result (under `lock`); it is resumed once the lock is released.
    func deliver(_ result: Result<HTTPResponse, any Error>, to continuation: CheckedContinuation<HTTPResponse, any Error>) {
        outbox.append(Delivery(continuation: continuation, result: result))
    }

    /// Queues the report that a transfer's request left for the network (under `lock`); it is
    /// made once the lock is released, before any result.
    func reportStart(_ reporter: RequestStartReporter) {
        startedRequests.append(reporter)
    }

    private func takeOutbox() -> (starts: [RequestStartReporter], deliveries: [Delivery]) {
        guard !outbox.isEmpty || !startedRequests.isEmpty else { return ([], []) }
        defer {
            outbox.removeAll(keepingCapacity: true)
            startedRequests.removeAll(keepingCapacity: true)
        }
        return (startedRequests, outbox)
    }

    private func resume(_ ready: (starts: [RequestStartReporter], deliveries: [Delivery])) {
        for start in ready.starts { start.reportStart() }
        for delivery in ready.deliveries { delivery.continuation.resume(with: delivery.result) }
    }

    /// Queues `command` for the engine thread and wakes it. Safe from any thread, also from
    /// libcurl's callbacks (it never takes `lock`).
    func submit(_ command: Command) {
        commandLock.withLock {
            if exited { return }
            startThreadIfNeeded()
            commands.append(command)
            ccurl_waker_signal(waker.write)
        }
    }

    /// Wakes the engine thread unless it has ended. The write happens under `commandLock`: once
    /// `exited` is set the thread closes the waker, and a write to its closed descriptor could hit
    /// a file or socket that reused the number.
    private func signal() {
        commandLock.withLock {
            if !exited { ccurl_waker_signal(waker.write) }
        }
    }

    /// Starts the engine thread on first use (under `commandLock`).
    private func startThreadIfNeeded() {
        guard !threadStarted else { return }
        threadStarted = true
        let thread = Thread { [self] in run() }
        thread.name = "courier.curl"
        thread.start()
    }

    /// Lets the running transfers finish, then ends the thread and closes the connections
    /// (the transport switched to a new engine).
    func retire() {
        poolLock.withLock { shuttingDown = true }
        let started: Bool = commandLock.withLock {
            if threadStarted {
                commands.append(.retire)
                ccurl_waker_signal(waker.write)
            } else {
                // No thread will ever run: a caller that took this engine just before the
                // transport switched to a new one must find it ended, not a freed multi handle.
                exited = true
            }
            return threadStarted
        }
        if !started { lock.withLock { cleanUp() } }
    }

    // MARK: - the engine thread

    private func run() {
        let capacity = 64
        var fds = [Int32](repeating: 0, count: capacity)
        var flags = [Int32](repeating: 0, count: capacity)
        lock.lock()
        while true {
            runCommands()
            runTimer()
            collectFinished()
            flushDirty()
            if retiring && running.isEmpty && isDrained() { break }
            let now = ccurl_now_ms()
            let until = min(deadline ?? (now + Self.longestWait), now + Self.longestWait)
            waitingUntil = until
            let ready = takeOutbox()
            lock.unlock()
            resume(ready)
            // A caller that found the lock busy queued its start: add it now, not after the wait.
            if commandLock.withLock({ !pendingStarts.isEmpty }) {
                lock.lock()
                waitingUntil = nil
                continue
            }
            let count = Int(ccurl_poller_wait(poller, &fds, &flags, Int32(capacity), Int32(max(0, until - now))))
            lock.lock()
            waitingUntil = nil
            for index in 0..<count {
                if fds[index] == waker.read {
                    ccurl_waker_drain(waker.read)
                    continue
                }
                var active: Int32 = 0
                _ = curl_multi_socket_action(multi, fds[index], flags[index], &active)
            }
        }
        // Under `lock`: a caller that starts a transfer now finds `exited` and leaves the multi
        // handle alone, also while libcurl's callbacks run in its cleanup.
        cleanUp()
        let ready = takeOutbox()
        lock.unlock()
        resume(ready)
    }

    private func runCommands() {
        let (batch, starts): ([Command], [CurlTransfer]) = commandLock.withLock {
            defer {
                commands.removeAll(keepingCapacity: true)
                pendingStarts.removeAll(keepingCapacity: true)
            }
            return (commands, pendingStarts)
        }
        for command in batch {
            switch command {
            case .cancel(let transfer): cancel(transfer)
            case .resume(let transfer): resume(transfer)
            case .resumeUpload(let transfer): resumeUpload(transfer)
            case .retire: retiring = true
            }
        }
        // After the commands: a cancelled transfer not added yet fails at once in `add`.
        for transfer in starts { add(transfer) }
    }

    /// Lets libcurl handle its timeouts (and start transfers just added) once its timer is due.
    private func runTimer() {
        for _ in 0..<4 {
            guard let due = deadline, due <= ccurl_now_ms() else { return }
            deadline = nil  // libcurl sets the next one through the timer callback
            var active: Int32 = 0
            _ = curl_multi_socket_action(multi, ccurl_socket_timeout(), 0, &active)
        }
    }

    /// Whether no command waits; if so, later submissions are refused (the thread is ending).
    private func isDrained() -> Bool {
        commandLock.withLock {
            guard commands.isEmpty, pendingStarts.isEmpty else { return false }
            exited = true
            return true
        }
    }

    private func add(_ transfer: CurlTransfer) {
        if transfer.isCancelled {
            transfer.complete(with: URLError(.cancelled))
            transfer.release()
            recycle(transfer.handle)
            return
        }
        let code = curl_multi_add_handle(multi, transfer.handle)
        guard code == CURLM_OK else {
            transfer.complete(
                with: URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "curl_multi_add_handle failed (\(code.rawValue))"])
            )
            transfer.release()
            recycle(transfer.handle)
            return
        }
        running[transfer.handle] = transfer
    }

    private func cancel(_ transfer: CurlTransfer) {
        guard running[transfer.handle] === transfer else {
            transfer.isCancelled = true  // not added yet: `add` fails it at once
            return
        }
        // Removing an unfinished transfer closes its connection (HTTP/1.1) or resets its stream
        // (HTTP/2), so the server sees the abort at once.
        remove(transfer, failing: URLError(.cancelled))
    }

    private func resume(_ transfer: CurlTransfer) {
        guard running[transfer.handle] === transfer else { return }
        transfer.wantsPause = false
        if transfer.isReceivePaused {
            transfer.isReceivePaused = false
            // Keep an upload that waits for its stream paused.
            _ = curl_easy_pause(transfer.handle, transfer.isSendPaused ? ccurl_pause_send() : ccurl_pause_continue())
        }
    }

    private func resumeUpload(_ transfer: CurlTransfer) {
        guard running[transfer.handle] === transfer, transfer.isSendPaused else { return }
        transfer.isSendPaused = false
        // Keep a download that waits for its consumer paused.
        _ = curl_easy_pause(transfer.handle, transfer.isReceivePaused ? ccurl_pause_receive() : ccurl_pause_continue())
    }

    private func collectFinished() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                let transfer = running[handle]
            else { continue }
            let code = ccurl_msg_result(message)
            idleConnections.transferFinished(handle)
            running[handle] = nil
            _ = curl_multi_remove_handle(multi, handle)
            if code == CURLE_ABORTED_BY_CALLBACK, transfer.refusedConnection {
                // Stopped before the request went out on a kept connection that had bytes or an
                // end of stream waiting (CurlIdleConnections): the same transfer starts again.
                transfer.refusedConnection = false
                transfer.refusedConnections += 1
                if transfer.refusedConnections <= Self.maximumUnusableConnections {
                    add(transfer)
                    continue
                }
                transfer.complete(with: URLError(.networkConnectionLost))
                transfer.release()
                curl_easy_cleanup(handle)
                continue
            }
            transfer.finish(code: code)
            transfer.release()
            // State curl_easy_reset keeps (libcurl 7.88: rewindbeforesend after a failed resend,
            // cookiehost from a caller's Host field) must not reach the next call: only a handle
            // whose transfer succeeded without its own Host field goes back to the pool.
            if code == CURLE_OK, transfer.isReusable { recycle(handle) } else { curl_easy_cleanup(handle) }
        }
    }

    /// Whether the kept HTTP/1.x connection with these ports, which libcurl is about to send a
    /// request on, must not be used: bytes or an end of stream wait on it (``CurlIdleConnections``;
    /// under `lock`, from CURLOPT_PREREQFUNCTION). Its socket is then shut down.
    func refusesReuse(_ handle: UnsafeMutableRawPointer, localPort: Int, remotePort: Int) -> Bool {
        idleConnections.takeIfUnusable(handle, localPort: localPort, remotePort: remotePort)
    }

    /// Called by a streamed transfer (under `lock`, in a write callback) when it starts holding
    /// bytes for its consumer.
    func markDirty(_ transfer: CurlTransfer) {
        dirty.append(transfer)
    }

    /// Hands the bytes streamed transfers collected to their consumers.
    private func flushDirty() {
        guard !dirty.isEmpty else { return }
        let batch = dirty
        dirty.removeAll(keepingCapacity: true)
        for transfer in batch { transfer.flushStream() }
    }

    private func remove(_ transfer: CurlTransfer, failing error: URLError) {
        running[transfer.handle] = nil
        _ = curl_multi_remove_handle(multi, transfer.handle)
        transfer.complete(with: error)
        transfer.release()
        // An aborted handle may hold a half-used connection state; never reuse it.
        curl_easy_cleanup(transfer.handle)
    }

    /// Frees the multi handle, the idle handles and the descriptors (under `lock`, once `exited`).
    private func cleanUp() {
        let handles: [UnsafeMutableRawPointer] = poolLock.withLock {
            defer { idleHandles.removeAll() }
            return idleHandles
        }
        for handle in handles { curl_easy_cleanup(handle) }
        curl_multi_cleanup(multi)
        if poller >= 0 { close(poller) }
        if waker.read >= 0 { close(waker.read) }
        if waker.write >= 0, waker.write != waker.read { close(waker.write) }
    }

    // MARK: - libcurl's socket and timer callbacks (under `lock`)

    /// CURLMOPT_SOCKETFUNCTION: which sockets to watch for what. `socketp` (set through
    /// `curl_multi_assign`) is non-nil once a socket is watched.
    private static let socketCallback: curl_socket_callback = { _, socket, what, userdata, socketp in
        guard let userdata else { return -1 }
        let engine = Unmanaged<CurlEngine>.fromOpaque(userdata).takeUnretainedValue()
        let known: Int32 = socketp == nil ? 0 : 1
        if ccurl_poller_watch(engine.poller, socket, what, known) != 0, what != Int32(CURL_POLL_REMOVE) { return -1 }
        if what != Int32(CURL_POLL_REMOVE), socketp == nil {
            _ = curl_multi_assign(engine.multi, socket, userdata)  // any non-nil marker
        }
        return 0
    }

    /// CURLMOPT_TIMERFUNCTION: when libcurl wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)`
    /// (`timeout` milliseconds from now; -1 cancels the timer).
    private static let timerCallback: curl_multi_timer_callback = { _, timeout, userdata in
        guard let userdata else { return -1 }
        let engine = Unmanaged<CurlEngine>.fromOpaque(userdata).takeUnretainedValue()
        engine.deadline = timeout < 0 ? nil : ccurl_now_ms() + Int64(timeout)
        return 0
    }
}

/// `curl_global_init`, once per process, before the first handle.
enum CurlGlobal {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}
#endif
