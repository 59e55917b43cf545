#if canImport(CourierCurl)
import CCurl
import Courier
import Foundation

/// The least an async Swift client over libcurl can do: one thread drives a multi handle
/// (`curl_multi_perform` + `curl_multi_poll`, as the plain loop does), callers hand it a request
/// under a lock and `curl_multi_wakeup`, and the thread resumes each caller's continuation with
/// the body, which the caller decodes. No headers parsed, no status checked, no timeouts, no
/// cancellation: the floor under any client that keeps libcurl off Swift's cooperative pool, for
/// issue 25's goal 3 (`courier-bench --only cpu … --profile minimalBridge`; not a row of the table).
final class MinimalCurlBridge: @unchecked Sendable {
    private final class Call {
        let handle: UnsafeMutableRawPointer
        let continuation: CheckedContinuation<Data, any Error>
        var body = Data()
        init(handle: UnsafeMutableRawPointer, continuation: CheckedContinuation<Data, any Error>) {
            self.handle = handle
            self.continuation = continuation
        }
    }

    private static let collect: ccurl_data_callback = { buffer, size, count, userdata in
        guard let userdata else { return 0 }
        let call = Unmanaged<Call>.fromOpaque(userdata).takeUnretainedValue()
        call.body.append(UnsafeRawBufferPointer(start: buffer, count: size * count).bindMemory(to: UInt8.self))
        return size * count
    }

    private let multi: UnsafeMutableRawPointer?
    private let headers: UnsafeMutablePointer<curl_slist>?
    private let lock = NSLock()
    /// Guarded by `lock`: requests not yet added, idle easy handles, whether to stop.
    private var pending: [Call] = []
    private var idle: [UnsafeMutableRawPointer] = []
    private var stopping = false
    /// Only touched on the loop's thread.
    private var running: [UnsafeMutableRawPointer: Call] = [:]
    private var thread: Thread?

    init(hostLimit: Int) {
        _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        multi = curl_multi_init()
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, hostLimit)
        // A cache that keeps every connection (libcurl's default shrinks with the handles added,
        // and closing connections would be cost that is not the bridge's).
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, 64)
        headers = curl_slist_append(nil, "Accept: application/json")
        let thread = Thread { [self] in loop() }
        self.thread = thread
        thread.start()
    }

    /// `GET url`: the body once the transfer completed.
    func get(_ url: String) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            lock.lock()
            let handle = idle.popLast() ?? curl_easy_init()
            guard let handle else {
                lock.unlock()
                continuation.resume(throwing: URLError(.unknown))
                return
            }
            _ = ccurl_easy_setopt_string(handle, CURLOPT_URL, url)
            _ = ccurl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
            _ = ccurl_easy_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, "")
            _ = ccurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headers)
            _ = ccurl_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, Self.collect)
            pending.append(Call(handle: handle, continuation: continuation))
            lock.unlock()
            curl_multi_wakeup(multi)
        }
    }

    /// Stops the loop's thread and frees the handles once it ended.
    func finish() {
        lock.lock()
        stopping = true
        lock.unlock()
        curl_multi_wakeup(multi)
    }

    private func loop() {
        while true {
            lock.lock()
            let added = pending
            pending.removeAll(keepingCapacity: true)
            let stop = stopping
            lock.unlock()
            if stop { break }
            for call in added {
                _ = ccurl_easy_setopt_pointer(call.handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(call).toOpaque())
                running[call.handle] = call
                curl_multi_add_handle(multi, call.handle)
            }
            var active: Int32 = 0
            curl_multi_perform(multi, &active)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                    let call = running.removeValue(forKey: handle)
                else { continue }
                let failed = ccurl_msg_result(message) != CURLE_OK
                curl_multi_remove_handle(multi, handle)
                lock.lock()
                idle.append(handle)
                lock.unlock()
                if failed {
                    call.continuation.resume(throwing: URLError(.unknown))
                } else {
                    call.continuation.resume(returning: call.body)
                }
            }
            var ready: Int32 = 0
            curl_multi_poll(multi, nil, 0, 1000, &ready)
        }
        for call in running.values { call.continuation.resume(throwing: URLError(.cancelled)) }
        for handle in running.keys { curl_multi_remove_handle(multi, handle) }
        for handle in idle + running.keys { curl_easy_cleanup(handle) }
        curl_slist_free_all(headers)
        curl_multi_cleanup(multi)
    }
}
#endif
