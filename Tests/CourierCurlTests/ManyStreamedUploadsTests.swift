#if canImport(CCurl)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierCurl

/// Hundreds of streamed uploads over one CurlTransport whose bodies (an ``MessageBody``) wait for
/// their next chunk. The upload pump used to read each such body on a libdispatch thread of its
/// own, blocked for as long as the producer waited, and those threads are capped (255 on Linux):
/// 300 waiting uploads took them all, and nothing else in the process that needs one ran. The pump
/// now awaits the chunks in a task.
@Suite("Many streamed uploads over libcurl at once")
struct ManyStreamedUploadsTests {
    private struct Uploaded: Decodable {
        var bytes: Int
        var sha256: String
    }

    @Test(
        "300 uploads whose bodies wait hold no thread: a dispatch work item still runs, then each upload arrives whole",
        .timeLimit(.minutes(2)))
    func uploadsWhoseBodiesWaitHoldNoThread() async throws {
        let (base, _) = try CurlServers.namespace()
        let client = APIClient(environment: APIEnvironment(name: "curl", baseURL: base)) {
            $0.transport = CurlTransport { $0.httpMaximumConnectionsPerHost = 400 }
            $0.interceptors = .standard()
        }
        let gate = Gate()
        defer { gate.open() }
        let waiting = Locked(0)
        let count = 300
        let uploads = (0..<count).map { index in
            Task {
                let payload = Stress.payload(seed: index, count: 40_000)
                let body = MessageBody(
                    GatedChunks(first: payload.prefix(10_000), second: payload.dropFirst(10_000), gate: gate, waiting: waiting),
                    length: .known(Int64(payload.count)))
                let request = Request<Uploaded>(
                    method: .put, path: "/upload", body: .stream(BodyStream(body), contentType: "application/octet-stream"))
                return try await client.send(request)
            }
        }
        // Every body has given its first chunk and waits for the second.
        try await Stress.bounded("\(count) bodies waiting") {
            while waiting.current < count { try await Task.sleep(for: .milliseconds(10)) }
        }
        // With a thread held per waiting body, libdispatch had none left for this.
        let ran = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let once = Locked(false)
            let finish: @Sendable (Bool) -> Void = { value in
                if once.withLock({ done in
                    defer { done = true }
                    return !done
                }) {
                    continuation.resume(returning: value)
                }
            }
            DispatchQueue(label: "courier.test.probe").async { finish(true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + 5) { finish(false) }
        }
        #expect(ran, "a dispatch work item did not run within 5 s while \(count) upload bodies waited")
        gate.open()
        for (index, upload) in uploads.enumerated() {
            let payload = Stress.payload(seed: index, count: 40_000)
            let uploaded = try await upload.value
            #expect(uploaded.bytes == payload.count, "upload \(index)")
            #expect(uploaded.sha256 == SHA256Hex.of(payload), "upload \(index)")
        }
    }
}

/// Opens once; every waiter before or after goes on.
private final class Gate: Sendable {
    private let state = Locked<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state -> Bool in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if isOpen { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Two chunks; before the second, counts itself in `waiting` and waits for `gate`.
private struct GatedChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let first: Data
    let second: Data
    let gate: Gate
    let waiting: Locked<Int>

    struct AsyncIterator: AsyncIteratorProtocol {
        let chunks: GatedChunks
        var step = 0

        mutating func next() async throws -> Data? {
            defer { step += 1 }
            switch step {
            case 0: return chunks.first
            case 1:
                chunks.waiting.withLock { $0 += 1 }
                await chunks.gate.wait()
                return chunks.second
            default: return nil
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: self) }
}
#endif
