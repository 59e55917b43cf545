#if canImport(CCurl)
import CCurl
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request on one easy handle: what libcurl's callbacks write into, and how the caller gets
/// the result.
///
/// Created and configured on the calling task, then owned by the engine: from
/// ``CurlEngine/start(_:)`` on, every property is read and written only under the engine's lock
/// (callbacks run inside `curl_multi_socket_action`, on the engine thread or on the thread that
/// starts a transfer).
final class CurlTransfer: @unchecked Sendable {
    /// How the response body reaches the caller.
    enum Delivery {
        /// Collect the whole body, then resume the caller with the complete response; a body
        /// that grows past `limit` bytes (when set) aborts the transfer.
        case buffered(limit: Int?)
        /// Resume the caller as soon as the head arrives; the body flows through a
        /// `StreamBuffer` of at most `limit` bytes.
        case streamed(limit: Int)

        /// libcurl's receive buffer for this delivery (`CURLOPT_BUFFERSIZE`, bytes): larger for a
        /// streamed body, libcurl's default (`nil`) for a buffered one.
        var receiveBufferSize: Int? {
            if case .streamed = self { return CurlTransfer.streamReceiveBuffer }
            return nil
        }
    }

    let handle: UnsafeMutableRawPointer
    let url: URL
    let delivery: Delivery
    unowned(unsafe) let engine: CurlEngine
    /// The request header list given to `CURLOPT_HTTPHEADER` (freed in ``release()``).
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// The `CURLOPT_RESOLVE` list of a host with a configured address (freed in ``release()``).
    var resolveList: UnsafeMutablePointer<curl_slist>?
    /// The request body source, when there is one.
    var upload: CurlUpload?
    /// Where phase timings go, when an interceptor measures this call.
    let timings: TaskTimingsReporter?
    /// Where transfer progress goes, when someone follows it.
    let progress: TransferProgressReporter?
    /// Where the transfer reports that its request left for the network, when the call waits for it.
    let started: RequestStartReporter?
    /// Filled by libcurl with a detailed message on failure (CURLOPT_ERRORBUFFER).
    let errorBuffer: UnsafeMutablePointer<CChar>

    // Response state (under the engine's lock).
    private var fields: [HTTPHeaders.Field] = []
    /// `Content-Length` of the response being received, when it has one.
    private var contentLength: Int?
    /// Whether a content coding is undone (by libcurl, or by Courier for a streamed body), so
    /// `Content-Length` is not the delivered length.
    private var isContentDecoded = false
    /// Whether libcurl hands a streamed body over as sent and Courier undoes its content codings
    /// on demand (``CurlStreamDecoding``).
    var decodesStreamedContent = false
    /// Whether libcurl undoes the content codings of this (buffered) body (`CURLOPT_ACCEPT_ENCODING`).
    var libcurlDecodes = false
    private var headComplete = false
    /// Whether the final response's head arrived whole (error mapping: a head over libcurl's limits fails before).
    var receivedHead: Bool { headComplete }
    private var statusCode = 0
    private var body = Data()
    /// The limit a buffered body grew past (the transfer was aborted there), if it did.
    private var exceededLimit: Int?
    private var continuation: CheckedContinuation<HTTPResponse, any Error>?
    private var stream: StreamBuffer?
    private var pending = Data()

    /// Set by the consumer side through `cancel` before the transfer was added.
    var isCancelled = false
    /// The stream buffer asked the producer to stop; the next body chunk pauses the transfer.
    var wantsPause = false
    /// libcurl holds the transfer paused on the receiving side.
    var isReceivePaused = false
    /// libcurl holds the transfer paused on the sending side (the upload stream had no bytes).
    var isSendPaused = false
    /// The upload stream failed (the read callback aborted the transfer).
    var uploadFailed = false
    /// Whether libcurl may send this request again by itself (``TransportResendRule``): after a
    /// reused connection died before any answer, libcurl reconnects and repeats the request.
    var allowsResend = true
    /// The pins the server's chain must satisfy (a pinned host), checked before the request is sent.
    var pins: HostPins?
    /// The chain failed the pins: the transfer was aborted before its request was sent.
    var pinningFailure: PinningFailure?
    /// How many times libcurl got ready to send the request (CURLOPT_PREREQFUNCTION).
    var sendAttempts = 0
    /// Whether the request start was reported (once, whichever attempt sends it).
    var reportedStart = false
    /// Set when the prerequest callback stopped the transfer before sending, on a kept connection
    /// found unusable (``CurlIdleConnections``): the engine starts the transfer again.
    var refusedConnection = false
    /// How many kept connections this transfer found unusable.
    var refusedConnections = 0
    /// A resend by libcurl was stopped (a second attempt, or a rewind of the body, was refused):
    /// the request may have reached the server, and its connection was lost.
    var resendRefused = false
    /// Whether the handle may serve another call afterwards: not when the request named its own
    /// `Host` field (libcurl 7.88 keeps it for cookie matching until the handle is closed).
    var isReusable = true
    /// libcurl wanted to send the request again after a final response had arrived (a `417` to a
    /// caller's `Expect: 100-continue`, which libcurl 7.88 answers by resending the same request,
    /// field included, without end): the resend was stopped, and that response is the answer.
    var answeredBeforeResend = false

    private var received: Int64 = 0
    private var sent: Int64 = 0

    init(
        handle: UnsafeMutableRawPointer, url: URL, delivery: Delivery, engine: CurlEngine, timings: TaskTimingsReporter?,
        progress: TransferProgressReporter?, started: RequestStartReporter? = nil
    ) {
        self.handle = handle
        self.url = url
        self.delivery = delivery
        self.engine = engine
        self.timings = timings
        self.progress = progress
        self.started = started
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(to: 0)
    }

    deinit {
        errorBuffer.deallocate()
        if let headerList { curl_slist_free_all(headerList) }
        if let resolveList { curl_slist_free_all(resolveList) }
    }

    /// Registers where the result goes; called once, before the transfer is submitted.
    func attach(_ continuation: CheckedContinuation<HTTPResponse, any Error>) {
        self.continuation = continuation
    }

    /// Frees what libcurl no longer needs once the handle left the multi handle.
    func release() {
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        if let resolveList { curl_slist_free_all(resolveList) }
        resolveList = nil
        upload?.close()
    }

    // MARK: - callbacks (under the engine's lock)

    /// Bytes of trailer fields received after the body (RFC 9112 §7.1.2).
    private var trailerBytes = 0
    /// The trailer section grew past ``ResponseHeadOverflow/sectionLimit``: the transfer was
    /// aborted there.
    private(set) var trailersOverflowed = false

    /// One header line (CURLOPT_HEADERFUNCTION), CRLF included. Returns `false` to abort the
    /// transfer: trailer fields over ``ResponseHeadOverflow/sectionLimit`` in all (libcurl 7.88
    /// keeps every trailer line it hands over, with no limit of its own: a server sending them
    /// without end grew the process by its whole stream).
    func receiveHeaderLine(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !headComplete else {  // trailers: not part of the response, only counted
            trailerBytes += line.count
            if trailerBytes > ResponseHeadOverflow.sectionLimit { trailersOverflowed = true }
            return !trailersOverflowed
        }
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        if end == 0 {
            endOfHead()
            return true
        }
        let bytes = UnsafeBufferPointer(rebasing: line[0..<end])
        if bytes.starts(with: "HTTP/".utf8) {
            startHead()  // a new response (after an interim 1xx)
            return true
        }
        if bytes[0] == 0x20 || bytes[0] == 0x09, let last = fields.popLast() {
            // obs-fold (RFC 9112 §5.2): the value continues, joined by one space.
            let more = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            fields.append(HTTPHeaders.Field(name: last.name, value: last.value + " " + more))
            return true
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return true }
        var valueStart = colon + 1
        var valueEnd = bytes.count
        while valueStart < valueEnd, bytes[valueStart] == 0x20 || bytes[valueStart] == 0x09 { valueStart += 1 }
        while valueEnd > valueStart, bytes[valueEnd - 1] == 0x20 || bytes[valueEnd - 1] == 0x09 { valueEnd -= 1 }
        let nameBytes = UnsafeBufferPointer(rebasing: bytes[0..<colon])
        let valueBytes = UnsafeBufferPointer(rebasing: bytes[valueStart..<valueEnd])
        if Self.equalsIgnoringCase(nameBytes, "content-length") {
            contentLength = Self.decimal(valueBytes)
        } else if Self.equalsIgnoringCase(nameBytes, "content-encoding"),
            !Self.equalsIgnoringCase(valueBytes, "identity")
        {
            isContentDecoded = true
        }
        let name = String(decoding: nameBytes, as: UTF8.self)
        let value = String(decoding: valueBytes, as: UTF8.self)
        if fields.capacity == 0 { fields.reserveCapacity(16) }  // one allocation for a typical head
        fields.append(HTTPHeaders.Field(name: name, value: value))
        return true
    }

    /// Forgets the head received so far (a new response begins).
    private func startHead() {
        fields.removeAll(keepingCapacity: true)
        contentLength = nil
        isContentDecoded = false
    }

    /// Whether `bytes` spell `lowercased` in any ASCII case.
    private static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercased: StaticString) -> Bool {
        guard bytes.count == lowercased.utf8CodeUnitCount else { return false }
        let expected = lowercased.utf8Start
        for index in 0..<bytes.count {
            var byte = bytes[index]
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte += 32 }
            if byte != expected[index] { return false }
        }
        return true
    }

    /// A non-negative decimal number (as `Content-Length` spells it), or `nil`.
    private static func decimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private func endOfHead() {
        var code = 0
        _ = ccurl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        if (100..<200).contains(code), code != 101 {
            startHead()  // interim response; the final one follows
            return
        }
        statusCode = code
        headComplete = true
        switch delivery {
        case .buffered:
            if let length = contentLength, length > 0 { body.reserveCapacity(min(length, 8 << 20)) }
        case .streamed(let limit):
            let engine = self.engine
            let buffer = StreamBuffer(limit: limit, pausesProducer: true) { [self] in engine.submit(.cancel(self)) }
            buffer.setOnResume { [self] in engine.submit(.resume(self)) }
            stream = buffer
            let length: MessageBody.Length = contentLength.map { .known(Int64($0)) } ?? .unknown
            var response = makeResponse(body: Data())
            let body = MessageBody(buffer: buffer, length: isContentDecoded ? .unknown : length)
            if decodesStreamedContent, isContentDecoded {
                // Compressed bytes in the buffer (bounded by its limit), inflated by the consumer's reads.
                response.body = CurlStreamDecoding.decoding(body, codings: CurlStreamDecoding.codings(response.headers), url: url)
            } else {
                response.body = body
            }
            if let continuation { engine.deliver(.success(response), to: continuation) }
            continuation = nil
        }
    }

    /// Body bytes (CURLOPT_WRITEFUNCTION). Returns the count consumed, or `CURL_WRITEFUNC_PAUSE`.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        switch delivery {
        case .buffered(let limit):
            if let limit, bytes.count > limit - body.count {
                // Not consumed: libcurl aborts the transfer (CURLE_WRITE_ERROR) and reads no more.
                exceededLimit = limit
                body = Data()
                return 0
            }
            body.append(contentsOf: bytes)
            reportReceived(bytes.count)
            return bytes.count
        case .streamed:
            if wantsPause {
                // The chunk is not consumed: libcurl keeps it and delivers it again after
                // `curl_easy_pause(CURLPAUSE_CONT)`.
                isReceivePaused = true
                return ccurl_writefunc_pause()
            }
            if pending.isEmpty { engine.markDirty(self) }
            pending.append(contentsOf: bytes)
            reportReceived(bytes.count)
            if pending.count >= Self.streamChunk { flushStream() }
            return bytes.count
        }
    }

    /// Body bytes handed to the consumer at once rather than one write callback at a time
    /// (whatever arrived is handed over at the end of each engine step anyway).
    private static let streamChunk = 64 << 10

    /// libcurl's receive buffer for a streamed body (`CURLOPT_BUFFERSIZE`, bytes; the default is
    /// 16 KiB): fewer `recv` calls and write callbacks on a fast download.
    static let streamReceiveBuffer = 64 << 10

    /// Hands the bytes collected since the last flush to the stream buffer.
    func flushStream() {
        guard !pending.isEmpty, let stream else { return }
        let chunk = pending
        pending = Data()
        pending.reserveCapacity(Self.streamChunk + Self.streamReceiveBuffer)
        if stream.append(chunk) == .pause { wantsPause = true }
    }

    /// Request body bytes (CURLOPT_READFUNCTION): the count written, 0 at the end,
    /// `CURL_READFUNC_PAUSE` while the stream has nothing yet, `CURL_READFUNC_ABORT` on failure.
    func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let upload else { return 0 }
        let engine = self.engine
        switch upload.read(into: buffer, onReadable: { [self] in engine.submit(.resumeUpload(self)) }) {
        case .bytes(let count):
            if let progress, count > 0 {
                sent += Int64(count)
                progress.didSend(sent, of: upload.length.map(Int64.init))
            }
            return count
        case .wouldBlock:
            isSendPaused = true
            return ccurl_readfunc_pause()
        case .failed:
            uploadFailed = true
            return ccurl_readfunc_abort()
        }
    }

    private func reportReceived(_ count: Int) {
        guard let progress else { return }
        received += Int64(count)
        progress.didReceive(received, of: isContentDecoded ? nil : contentLength.map(Int64.init))
    }

    // MARK: - completion (under the engine's lock)

    /// The transfer ended with `code` (CURLMSG_DONE).
    func finish(code: CURLcode) {
        if code == CURLE_OK || headComplete { reportTimings() }
        if code == CURLE_OK || (code == CURLE_ABORTED_BY_CALLBACK && answeredBeforeResend) {
            if let continuation {
                engine.deliver(.success(makeResponse(body: body)), to: continuation)
                self.continuation = nil
                body = Data()
            } else {
                flushStream()
                stream?.finish()
                stream = nil  // the buffer's callbacks hold this transfer: no cycle once it ended
            }
            return
        }
        if let limit = exceededLimit, let continuation {
            engine.deliver(.failure(NetworkError.responseTooLarge(limit: limit)), to: continuation)
            self.continuation = nil
            return
        }
        complete(with: CurlErrorMapping.error(for: code, transfer: self))
    }

    /// Fails the caller (before the head) or the stream consumer (after it) with `error`.
    func complete(with error: URLError) {
        if let continuation {
            engine.deliver(.failure(error), to: continuation)
            self.continuation = nil
        } else {
            // Bytes that arrived before the failure still reach the consumer (a resumed download
            // continues from the last byte it got), then the error.
            flushStream()
            stream?.finish(throwing: error)
        }
        stream = nil
    }

    /// Fails the caller with ``CurlEngine/Ended`` (the engine refused the transfer before it began).
    func refuse() {
        if let continuation { engine.deliver(.failure(CurlEngine.Ended()), to: continuation) }
        continuation = nil
    }

    // MARK: - response

    /// The response head as received.
    var responseHeaders: HTTPHeaders { HTTPHeaders(fields) }

    private func makeResponse(body: Data) -> HTTPResponse {
        HTTPResponse(statusCode: statusCode, headers: HTTPHeaders(fields), body: body, url: url)
    }

    /// Whether the response head has arrived.
    var hasHead: Bool { headComplete }

    private func reportTimings() {
        guard let timings else { return }
        timings.report(CurlTimings.read(from: handle))
    }
}
#endif
