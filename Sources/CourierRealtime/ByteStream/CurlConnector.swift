#if canImport(CCurl)
import CCurl
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs one connect-only libcurl transfer (`CURLOPT_CONNECT_ONLY`: TCP, the proxy tunnel and TLS,
/// no request) on a multi handle of its own, holding no thread while it waits: libcurl's sockets
/// are watched by dispatch sources and its timer is a dispatch timer, all on one serial queue
/// (`curl_multi_socket_action`, the event-driven interface). A blocking `curl_easy_perform` held a
/// libdispatch thread for up to the connect timeout, and those are capped (255 on Linux): a
/// storm of reconnects to an unreachable host stalled the whole process.
///
/// libcurl's sockets are closed here (`CURLOPT_CLOSESOCKETFUNCTION`), only once no dispatch source
/// watches them any more: libdispatch needs a descriptor open until each source on it was
/// cancelled and its cancel handler ran.
///
/// The easy handle stays added to the multi handle for as long as the connection is used:
/// libcurl's `curl_easy_send` and `curl_easy_recv` work on a connect-only transfer of the multi
/// interface only while it is added. ``cleanUp()`` removes it and frees both.
final class CurlConnector: @unchecked Sendable {
    // @unchecked: `multi`, `sources`, `timer`, `continuation`, `result` and `cancelled` are only
    // touched on `queue` (libcurl's callbacks run there too, inside the multi calls made there);
    // `watchers` and `closeWhenUnwatched` are guarded by `lock` (a socket may also be closed from
    // the thread that cleans up).
    let easy: UnsafeMutableRawPointer
    private let multi: UnsafeMutableRawPointer
    private let queue = DispatchQueue(label: "courier.realtime.curl.connect")
    private var sources: [curl_socket_t: (read: (any DispatchSourceProtocol)?, write: (any DispatchSourceProtocol)?)] = [:]
    private var timer: (any DispatchSourceTimer)?
    private var continuation: CheckedContinuation<CURLcode, Never>?
    private var result: CURLcode?
    private var cancelled = false
    private let lock = NSLock()
    /// Dispatch sources per socket whose cancel handler has not run yet.
    private var watchers: [curl_socket_t: Int] = [:]
    /// Sockets libcurl closed while a source still watched them.
    private var closeWhenUnwatched: Set<curl_socket_t> = []

    /// A connector for `easy` (configured, `CURLOPT_CONNECT_ONLY` set); `nil` when libcurl cannot
    /// make a multi handle.
    init?(easy: UnsafeMutableRawPointer) {
        guard let multi = curl_multi_init() else { return nil }
        self.easy = easy
        self.multi = multi
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        _ = ccurl_multi_setopt_socket_callback(multi, Self.socketCallback)
        _ = ccurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, userdata)
        _ = ccurl_multi_setopt_timer_callback(multi, Self.timerCallback)
        _ = ccurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, userdata)
        _ = ccurl_easy_setopt_closesocket_callback(easy, Self.closeSocketCallback)
        _ = ccurl_easy_setopt_pointer(easy, CURLOPT_CLOSESOCKETDATA, userdata)
    }

    /// Connects: returns libcurl's result once the connection is made or has failed (at the
    /// latest at `CURLOPT_CONNECTTIMEOUT_MS`), or `CURLE_ABORTED_BY_CALLBACK` at once when the
    /// calling task is cancelled. Every dispatch source has ended by then.
    func connect() async -> CURLcode {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CURLcode, Never>) in
                queue.async { [self] in
                    self.continuation = continuation
                    if cancelled {
                        finish(CURLE_ABORTED_BY_CALLBACK)
                    } else if curl_multi_add_handle(multi, easy) != CURLM_OK {
                        finish(CURLE_FAILED_INIT)
                    }
                    // Adding the handle set libcurl's timer: the transfer starts when it fires.
                }
            }
        } onCancel: {
            queue.async { [self] in
                cancelled = true
                if continuation != nil, result == nil { finish(CURLE_ABORTED_BY_CALLBACK) }
            }
        }
    }

    /// Removes the easy handle from the multi handle and frees both (closing the connection's
    /// socket through ``closeSocketCallback``). Call once, after ``connect()`` returned and no
    /// dispatch source watches the socket any more.
    func cleanUp() {
        _ = curl_multi_remove_handle(multi, easy)
        curl_easy_cleanup(easy)
        curl_multi_cleanup(multi)
    }

    // MARK: - on `queue`

    /// Lets libcurl act on `socket` (`CURL_SOCKET_TIMEOUT` for its timer), then looks for the end.
    private func act(on socket: curl_socket_t, _ events: Int32) {
        guard result == nil else { return }
        var running: Int32 = 0
        _ = curl_multi_socket_action(multi, socket, events, &running)
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            if message.pointee.msg == CURLMSG_DONE, message.pointee.easy_handle == easy {
                finish(ccurl_msg_result(message))
            }
        }
    }

    /// Records the result, stops the timer and every source; the caller resumes once the last
    /// source's cancel handler ran.
    private func finish(_ code: CURLcode) {
        guard result == nil else { return }
        result = code
        timer?.cancel()
        timer = nil
        for (_, pair) in sources {
            pair.read?.cancel()
            pair.write?.cancel()
        }
        sources = [:]
        resumeIfUnwatched()
    }

    private func resumeIfUnwatched() {
        guard let result, let continuation else { return }
        let unwatched = lock.withLock { watchers.isEmpty }
        guard unwatched else { return }
        self.continuation = nil
        continuation.resume(returning: result)
    }

    /// libcurl's socket callback: watch `socket` for what libcurl waits on (`CURL_POLL_*`).
    private func watch(_ socket: curl_socket_t, _ what: Int32) {
        let pair = sources[socket] ?? (nil, nil)
        let read = source(pair.read, wanted: what != CURL_POLL_REMOVE && what & CURL_POLL_IN != 0) {
            started(DispatchSource.makeReadSource(fileDescriptor: socket, queue: queue), on: socket, events: CURL_CSELECT_IN)
        }
        let write = source(pair.write, wanted: what != CURL_POLL_REMOVE && what & CURL_POLL_OUT != 0) {
            started(DispatchSource.makeWriteSource(fileDescriptor: socket, queue: queue), on: socket, events: CURL_CSELECT_OUT)
        }
        sources[socket] = read == nil && write == nil ? nil : (read, write)
    }

    /// `current` kept while `wanted`, else cancelled; a new one from `make` when wanted and absent.
    private func source(
        _ current: (any DispatchSourceProtocol)?, wanted: Bool, make: () -> any DispatchSourceProtocol
    ) -> (any DispatchSourceProtocol)? {
        guard wanted else {
            current?.cancel()
            return nil
        }
        return current ?? make()
    }

    /// Counts `source` as watching `socket`, sets its handlers (act on `events`; on cancel, close a
    /// socket libcurl closed meanwhile) and resumes it.
    private func started(
        _ source: any DispatchSourceProtocol, on socket: curl_socket_t, events: Int32
    ) -> any DispatchSourceProtocol {
        lock.withLock { watchers[socket, default: 0] += 1 }
        // Dispatch releases the handlers once the source is cancelled: no lasting cycle.
        source.setEventHandler { [self] in act(on: socket, events) }
        source.setCancelHandler { [self] in
            let closesNow: Bool = lock.withLock {
                let left = (watchers[socket] ?? 1) - 1
                watchers[socket] = left > 0 ? left : nil
                return left <= 0 && closeWhenUnwatched.remove(socket) != nil
            }
            if closesNow { _ = close(socket) }
            resumeIfUnwatched()
        }
        source.resume()
        return source
    }

    /// libcurl's timer callback: call `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)` in
    /// `milliseconds` (-1: never). Never from inside the callback itself.
    private func setTimer(_ milliseconds: Int) {
        timer?.cancel()
        timer = nil
        guard milliseconds >= 0, result == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(milliseconds))
        timer.setEventHandler { [self] in act(on: ccurl_socket_timeout(), 0) }
        timer.resume()
        self.timer = timer
    }

    // MARK: - libcurl's callbacks

    private static let socketCallback: curl_socket_callback = { _, socket, what, userdata, _ in
        guard let userdata else { return -1 }
        Unmanaged<CurlConnector>.fromOpaque(userdata).takeUnretainedValue().watch(socket, what)
        return 0
    }

    private static let timerCallback: curl_multi_timer_callback = { _, timeout, userdata in
        guard let userdata else { return -1 }
        Unmanaged<CurlConnector>.fromOpaque(userdata).takeUnretainedValue().setTimer(timeout)
        return 0
    }

    /// Closes `socket` now, or once the last source watching it was cancelled.
    private static let closeSocketCallback: curl_closesocket_callback = { userdata, socket in
        guard let userdata else { return close(socket) }
        let connector = Unmanaged<CurlConnector>.fromOpaque(userdata).takeUnretainedValue()
        let watched: Bool = connector.lock.withLock {
            guard connector.watchers[socket] != nil else { return false }
            connector.closeWhenUnwatched.insert(socket)
            return true
        }
        return watched ? 0 : close(socket)
    }
}
#endif
