import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One streamed call of ``URLSessionTransport``: where its head goes and the buffer its body
/// bytes go to.
struct StreamingCall: Sendable {
    /// Resumed once, with the head or the failure before it.
    var head: CheckedContinuation<HTTPResponse, any Error>?
    let buffer: StreamBuffer
    let progress: TransferProgressReporter?
    var received: Int64 = 0
    var expected: Int64?
}

extension TransportSessionDelegate {
    /// Runs `task` as a streamed call: returns once the head arrived, with the body delivered
    /// through a ``StreamBuffer`` of `limit` bytes. On Apple platforms a full buffer suspends the
    /// task (a suspended data task sends and times out nothing) and a drained one resumes it; on
    /// Linux a suspended task re-sends its request, so a full buffer fails the body instead.
    func stream(_ task: URLSessionDataTask, limit: Int) async throws -> HTTPResponse {
        let id = task.taskIdentifier
        let control = TaskControl.Commands(task)
        #if canImport(Darwin)
        let buffer = StreamBuffer(limit: limit, pausesProducer: true) { control.cancel() }
        // Direct, in step with the `suspend()` in `receiveStreamed` (Apple's calls do not block).
        buffer.setOnResume { task.resume() }
        #else
        // Called on the delegate queue when the buffer overflows: the cancel must not wait there.
        let buffer = StreamBuffer(limit: limit, pausesProducer: false) { control.cancel() }
        #endif
        let progress = TransferProgressReporter.current
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                streams.withLock { $0[id] = StreamingCall(head: continuation, buffer: buffer, progress: progress) }
                if Task.isCancelled {
                    failStream(id, URLError(.cancelled))
                } else {
                    control.resume()
                }
            }
        } onCancel: {
            // Cancels only while waiting for the head; afterwards the body's consumer owns the task.
            if streams.withLock({ $0[id]?.head != nil }) { control.cancel() }
        }
    }

    /// Hands the head to the waiting caller, with the body streaming from the call's buffer.
    func deliverHead(_ id: Int, _ http: HTTPURLResponse) {
        let delivery: (CheckedContinuation<HTTPResponse, any Error>, StreamBuffer)? = streams.withLock { streams in
            guard var call = streams[id], let head = call.head else { return nil }
            call.head = nil
            call.expected = Self.expectedLength(http)
            streams[id] = call
            return (head, call.buffer)
        }
        guard let (continuation, buffer) = delivery else { return }
        var response = HTTPResponse(http, body: Data())
        response.streamedBody = HTTPBody(buffer: buffer, length: Self.expectedLength(http).map { .known($0) } ?? .unknown)
        continuation.resume(returning: response)
    }

    /// Passes received bytes on; `false` when the task is not a streamed call.
    func receiveStreamed(_ id: Int, _ data: Data, task: URLSessionDataTask) -> Bool {
        guard
            let (buffer, progress, received, expected) = streams.withLock({
                streams -> (StreamBuffer, TransferProgressReporter?, Int64, Int64?)? in
                guard var call = streams[id] else { return nil }
                call.received += Int64(data.count)
                streams[id] = call
                return (call.buffer, call.progress, call.received, call.expected)
            })
        else { return false }
        let demand = buffer.append(data)
        #if canImport(Darwin)
        if demand == .pause {
            task.suspend()
            // The consumer may have drained the buffer (and resumed the not yet suspended task)
            // between `append` and `suspend`: then resume here, or the task would stay suspended.
            if !buffer.isPaused { task.resume() }
        }
        #else
        _ = demand  // Linux: a full buffer already failed the body and cancelled the task.
        #endif
        progress?.didReceive(received, of: expected)
        return true
    }

    /// Ends a streamed call: the head's waiter gets the failure, or the body ends (with it).
    /// `false` when the task is not a streamed call.
    @discardableResult
    func completeStreamed(_ id: Int, error: (any Error)?, response: URLResponse?) -> Bool {
        guard let call = streams.withLock({ $0.removeValue(forKey: id) }) else { return false }
        if let head = call.head {
            if let error {
                head.resume(throwing: error)
                return true
            }
            guard let http = response as? HTTPURLResponse else {
                head.resume(throwing: URLError(.badServerResponse))
                return true
            }
            var headResponse = HTTPResponse(http, body: Data())
            headResponse.streamedBody = HTTPBody(
                buffer: call.buffer, length: Self.expectedLength(http).map { .known($0) } ?? .unknown)
            head.resume(returning: headResponse)
        }
        call.buffer.finish(throwing: error)
        return true
    }

    /// Fails a streamed call that has not started.
    private func failStream(_ id: Int, _ error: URLError) {
        completeStreamed(id, error: error, response: nil)
    }

    /// The body length to expect: `Content-Length` of an identity-encoded body only (URLSession
    /// decodes gzip/br and keeps the compressed length), never a guess.
    static func expectedLength(_ http: HTTPURLResponse) -> Int64? {
        if let coding = http.value(forHTTPHeaderField: "Content-Encoding")?.trimmingCharacters(in: .whitespaces),
            !coding.isEmpty, coding.lowercased() != "identity"
        {
            return nil
        }
        guard let value = http.value(forHTTPHeaderField: "Content-Length"), let length = Int64(value), length >= 0 else {
            return nil
        }
        return length
    }
}
