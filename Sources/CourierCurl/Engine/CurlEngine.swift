#if canImport(CCurl)
import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One libcurl multi handle and the one thread that drives it (`curl_multi_poll` woken by
/// `curl_multi_wakeup`). Every call on the multi handle, and on an easy handle while it is added
/// to it, happens on that thread; other threads talk to it through ``submit(_:)``, a locked queue
/// of commands followed by a wakeup. The thread starts with the first transfer and ends after
/// ``retire()`` (when its transport is released or reset) once the transfers still running have ended.
final class CurlEngine: @unchecked Sendable {
    // @unchecked: `commands`, `threadStarted` and `idleHandles` are guarded by `lock`; `running`
    // and the multi handle are only touched on the engine thread.

    /// What other threads ask the engine thread to do.
    enum Command {
        /// Start a configured transfer.
        case add(CurlTransfer)
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
    /// The transport's cookie store; released after the last easy handle that uses it.
    private(set) var cookies: CurlCookieShare?
    private let lock = NSLock()
    private var commands: [Command] = []
    private var threadStarted = false
    private var idleHandles: [UnsafeMutableRawPointer] = []
    private var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var shuttingDown = false
    private var retiring = false
    private var exited = false

    /// Easy handles kept for reuse (each keeps its buffers; connections live in the multi handle).
    private static let maximumIdleHandles = 64

    /// - Parameters:
    ///   - maximumConnectionsPerHost: `CURLMOPT_MAX_HOST_CONNECTIONS` (0 = no limit).
    ///   - cookies: The cookie store every transfer uses, or `nil` for none.
    init(maximumConnectionsPerHost: Int, cookies: CurlCookieShare?) {
        _ = CurlGlobal.initialized
        self.cookies = cookies
        multi = curl_multi_init()
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maximumConnectionsPerHost)
        // HTTP/2 multiplexing (the default since 7.62; stated for clarity).
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
    }

    /// An easy handle from the pool (reset to defaults), or a new one; `nil` only when libcurl
    /// cannot allocate one.
    func makeHandle() -> UnsafeMutableRawPointer? {
        let reused: UnsafeMutableRawPointer? = lock.withLock { idleHandles.popLast() }
        if let reused {
            curl_easy_reset(reused)
            return reused
        }
        return curl_easy_init()
    }

    /// Returns an easy handle that is not added to the multi handle to the pool.
    func recycle(_ handle: UnsafeMutableRawPointer) {
        let kept: Bool = lock.withLock {
            guard !shuttingDown, idleHandles.count < Self.maximumIdleHandles else { return false }
            idleHandles.append(handle)
            return true
        }
        if !kept { curl_easy_cleanup(handle) }
    }

    /// Queues `command` for the engine thread and wakes it (starting it on first use).
    func submit(_ command: Command) {
        let start: Bool? = lock.withLock {
            if exited { return nil }
            commands.append(command)
            if threadStarted { return false }
            threadStarted = true
            return true
        }
        guard let start else {
            // The thread is gone (the transport was reset or released meanwhile): a transfer that
            // still arrives fails as a lost connection, which callers may retry.
            if case .add(let transfer) = command {
                transfer.complete(with: URLError(.networkConnectionLost))
                curl_easy_cleanup(transfer.handle)
            }
            return
        }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "courier.curl"
            thread.start()
        } else {
            curl_multi_wakeup(multi)
        }
    }

    /// Lets the running transfers finish, then ends the thread and closes the connections
    /// (the transport switched to a new engine).
    func retire() {
        let started: Bool = lock.withLock {
            shuttingDown = true
            return threadStarted
        }
        if started {
            submit(.retire)
        } else {
            cleanUp()
        }
    }

    // MARK: - the engine thread

    private func run() {
        while true {
            let batch: [Command] = lock.withLock {
                defer { commands.removeAll(keepingCapacity: true) }
                return commands
            }
            for command in batch {
                switch command {
                case .add(let transfer): add(transfer)
                case .cancel(let transfer): cancel(transfer)
                case .resume(let transfer): resume(transfer)
                case .resumeUpload(let transfer): resumeUpload(transfer)
                case .retire: retiring = true
                }
            }
            if retiring && running.isEmpty && isDrained() { break }
            var active: Int32 = 0
            _ = curl_multi_perform(multi, &active)
            collectFinished()
            for transfer in running.values { transfer.flushStream() }
            if retiring && running.isEmpty && isDrained() { break }
            var ready: Int32 = 0
            _ = curl_multi_poll(multi, nil, 0, 1000, &ready)
        }
        cleanUp()
    }

    /// Whether no command waits; if so, later submissions are refused (the thread is ending).
    private func isDrained() -> Bool {
        lock.withLock {
            guard commands.isEmpty else { return false }
            exited = true
            return true
        }
    }

    private func add(_ transfer: CurlTransfer) {
        if transfer.isCancelled {
            transfer.complete(with: URLError(.cancelled))
            recycle(transfer.handle)
            return
        }
        let code = curl_multi_add_handle(multi, transfer.handle)
        guard code == CURLM_OK else {
            transfer.complete(
                with: URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "curl_multi_add_handle failed (\(code.rawValue))"])
            )
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
            running[handle] = nil
            _ = curl_multi_remove_handle(multi, handle)
            transfer.finish(code: code)
            transfer.release()
            recycle(handle)
        }
    }

    private func remove(_ transfer: CurlTransfer, failing error: URLError) {
        running[transfer.handle] = nil
        _ = curl_multi_remove_handle(multi, transfer.handle)
        transfer.complete(with: error)
        transfer.release()
        // An aborted handle may hold a half-used connection state; never reuse it.
        curl_easy_cleanup(transfer.handle)
    }

    private func cleanUp() {
        let handles: [UnsafeMutableRawPointer] = lock.withLock {
            defer { idleHandles.removeAll() }
            return idleHandles
        }
        for handle in handles { curl_easy_cleanup(handle) }
        curl_multi_cleanup(multi)
        cookies = nil
    }
}

/// `curl_global_init`, once per process, before the first handle.
enum CurlGlobal {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}
#endif
