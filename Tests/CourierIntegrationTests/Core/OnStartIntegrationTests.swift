import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreIntegrationTests {
    /// `onStart` over real sockets, on the transport under test: it runs when a connection carries
    /// the request, not for a connection that was refused.
    @Suite struct OnStartOverSockets {
        @Test func aRefusedConnectionNeverRunsOnStart() async throws {
            let environment = APIEnvironment(name: "closed", baseURL: try #require(URL(string: "http://127.0.0.1:1")))
            let client = APIClient(environment: environment) {
                $0.transport = TestTransport.make()
                $0.interceptors = []
            }
            let started = Locked(0)
            let error = await CoreLive.networkError {
                try await client.send(Request<Data>.get("/items").onStart { started.withLock { $0 += 1 } })
            }
            #expect(error != nil)
            #expect(started.current == 0)
        }

        @Test func onStartRunsWhileTheServerIsStillWorkingOnARequestWithABody() async throws {
            let (client, namespace) = try TestServers.apiClient { $0.interceptors = [] }
            let (starts, signal) = AsyncStream.makeStream(of: Void.self)
            let request = Request<Data>.post("/slow", body: ["name": "Lamp"], query: ["seconds": "30"])
                .onStart { signal.yield() }
            let call = Task { try await client.send(request) }
            defer { call.cancel() }
            let startedBeforeAnswer = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    var iterator = starts.makeAsyncIterator()
                    return await iterator.next() != nil
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(10))  // bound only: the server answers after 30 s
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                signal.finish()
                return first
            }
            #expect(startedBeforeAnswer, "onStart over \(TestTransport.name)")
            try await CoreLive.waitUntilServerSaw("/slow", namespace: namespace)
        }
    }
}
