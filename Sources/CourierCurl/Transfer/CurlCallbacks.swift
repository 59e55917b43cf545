#if canImport(CCurl)
import CCurl
import Foundation

/// The C callbacks libcurl calls under the engine's lock. `userdata` is the ``CurlTransfer``
/// (unretained: the engine's table of running transfers keeps it alive while libcurl may call).
enum CurlCallbacks {
    static let header: ccurl_data_callback = { buffer, size, count, userdata in
        guard let buffer, let userdata else { return 0 }
        let length = size * count
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        let consumed = buffer.withMemoryRebound(to: UInt8.self, capacity: length) {
            transfer.receiveHeaderLine(UnsafeBufferPointer(start: $0, count: length))
        }
        return consumed ? length : 0  // 0: libcurl aborts the transfer (CURLE_WRITE_ERROR)
    }

    static let write: ccurl_data_callback = { buffer, size, count, userdata in
        guard let userdata else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: size * count))
    }

    static let read: ccurl_data_callback = { buffer, size, count, userdata in
        guard let userdata else { return ccurl_readfunc_abort() }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.sendBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
    }

    /// Rewinds the body for a resend; refused for a request libcurl must not repeat
    /// (``CurlTransfer/allowsResend``) and for a stream already read: libcurl then fails with
    /// `CURLE_SEND_FAIL_REWIND` instead of sending the request again.
    static let seek: curl_seek_callback = { userdata, offset, origin in
        guard let userdata, origin == SEEK_SET else { return CURL_SEEKFUNC_CANTSEEK }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        guard transfer.allowsResend, transfer.upload?.seek(to: Int(offset)) ?? false else {
            transfer.resendRefused = true
            return CURL_SEEKFUNC_CANTSEEK
        }
        return CURL_SEEKFUNC_OK
    }

    /// Called before each attempt to send the request, once a connection is made or reused: the
    /// first reports the request's start (``TransportReporter``) and goes ahead; a later one is
    /// libcurl repeating the request on a fresh connection ("Connection died, retrying a fresh
    /// connect", also for a bodiless `POST`, which has nothing to rewind), aborted unless the
    /// request may be repeated. A resend after a final response (libcurl's answer to a `417` for a
    /// caller's `Expect: 100-continue`, RFC 9110 §10.1.1, which 7.88 repeats with the same field
    /// and so without end) is always stopped, and that response is the call's answer. For a
    /// pinned host the connection's chain must carry a pinned key (``CurlPinCheck``), or the
    /// request is never sent. Before the first attempt, a kept HTTP/1.x connection with bytes or an
    /// end of stream waiting is refused (``CurlIdleConnections``): the engine starts the transfer
    /// again, and libcurl picks or opens another connection.
    static let prerequest: curl_prereq_callback = { userdata, _, _, remotePort, localPort in
        guard let userdata else { return ccurl_prereqfunc_abort() }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        if transfer.sendAttempts == 0,
            transfer.engine.refusesReuse(transfer.handle, localPort: Int(localPort), remotePort: Int(remotePort))
        {
            // Nothing was sent: the transfer starts again on another connection.
            transfer.refusedConnection = true
            return ccurl_prereqfunc_abort()
        }
        transfer.sendAttempts += 1
        if !transfer.reportedStart, let started = transfer.started {
            transfer.reportedStart = true
            transfer.engine.reportStart(started)  // a connection carries the request now
        }
        guard !transfer.hasHead else {
            transfer.answeredBeforeResend = true
            return ccurl_prereqfunc_abort()
        }
        guard transfer.sendAttempts == 1 || transfer.allowsResend else {
            transfer.resendRefused = true
            return ccurl_prereqfunc_abort()
        }
        if let pins = transfer.pins, let failure = CurlPinCheck.check(transfer.handle, pins: pins) {
            transfer.pinningFailure = failure
            return ccurl_prereqfunc_abort()
        }
        return ccurl_prereqfunc_ok()
    }
}
#endif
