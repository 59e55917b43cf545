import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting
@testable import CourierTransfers

/// One run per upload key at a time: a user tapping "upload" twice.
@Suite("tus uploads: one run per key")
struct TusOneRunPerKeyTests {
    /// A transport whose first PATCH waits until ``release()``: the first run stays under way.
    final class HeldFirstPatch: Transport {
        let inner: StubTransport
        private let state = Locked<(patches: Int, released: Bool, waiter: CheckedContinuation<Void, Never>?)>((0, false, nil))

        init(_ inner: StubTransport) { self.inner = inner }

        func send(_ request: URLRequest) async throws -> HTTPResponse {
            let first = state.withLock { state -> Bool in
                guard request.httpMethod == "PATCH" else { return false }
                state.patches += 1
                return state.patches == 1 && !state.released
            }
            if first {
                await withCheckedContinuation { continuation in
                    let now = state.withLock { state -> Bool in
                        if state.released { return true }
                        state.waiter = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            }
            return try await inner.send(request)
        }

        var firstPatchIsHeld: Bool { state.withLock { $0.waiter != nil } }

        func release() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.released = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }

    @Test("a second upload of the same key while one runs fails at once and sends nothing; the first completes")
    func aSecondRunOfTheSameKeyIsRefused() async throws {
        let folder = try TusRecordFaultTests.Folder()
        defer { folder.remove() }
        let stub = TusRecordFaultTests.server(headOffset: 0)
        let transport = HeldFirstPatch(stub)
        let client = APIClient(environment: TransfersFixture.environment) {
            $0.transport = transport
            $0.interceptors = [RequestIDInterceptor(), RetryInterceptor(maximumRetries: 0)]
        }
        let uploader = TusUploader(
            client: client, creationPath: "/tus/files", store: ResumableUploadStore(directory: folder.records),
            chunkSize: 400, policy: .standard)
        let first = uploader.upload(fileAt: folder.file)
        let clock = ContinuousClock()
        let start = clock.now
        while !transport.firstPatchIsHeld, clock.now - start < .seconds(20) { try await Task.sleep(for: .milliseconds(5)) }
        try #require(transport.firstPatchIsHeld)
        let error = await #expect(throws: NetworkError.self) { _ = try await uploader.upload(fileAt: folder.file).value }
        #expect(error?.kind == .invalidRequest)
        transport.release()
        #expect(try await first.value.path == "/v1/tus/files/new")
        let methods = stub.requests.map { $0.httpMethod ?? "" }
        #expect(methods == ["POST", "PATCH", "PATCH", "PATCH"], "the second run sent \(methods)")
        // The key is free again once the run ended: a new run uploads the file anew.
        #expect(try await uploader.upload(fileAt: folder.file).value.path == "/v1/tus/files/new")
    }
}
