import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

/// An endpoint's ``NetworkAccess`` against what a path monitor reports: refused calls send nothing
/// and fail with `.networkUnavailable`.
@Suite struct NetworkAccessTests {
    /// A monitor the test sets.
    final class StubPathMonitor: NetworkPathMonitoring {
        let path = Locked<NetworkPath?>(nil)
        var currentPath: NetworkPath? { path.current }
        init(_ path: NetworkPath?) { self.path.set(path) }
    }

    static func client(_ stub: StubTransport, monitor: StubPathMonitor?) -> APIClient {
        StandardClientFixture.client(stub) { $0.networkPath = monitor }
    }

    static let prefetch = Request<Data>.get("/covers", policy: EndpointPolicy.standard.with(\.networkAccess, .prefetch))

    @Test func aPrefetchOnAnExpensivePathIsRefusedBeforeAnythingIsSent() async throws {
        let stub = StubTransport { _ in .status(200, body: "{}") }
        let monitor = StubPathMonitor(NetworkPath(isExpensive: true, isConstrained: false))
        let started = Locked(0)
        let error = await StandardClientFixture.networkError {
            try await Self.client(stub, monitor: monitor).send(Self.prefetch.onStart { started.withLock { $0 += 1 } })
        }
        #expect(error == .networkUnavailable(.expensive))
        #expect(error?.kind == .networkUnavailable)
        #expect(stub.requestCount == 0)
        #expect(started.current == 0)
    }

    @Test func lowDataModeRefusesWhatDoesNotAllowConstrainedNetworks() async throws {
        let stub = StubTransport { _ in .status(200, body: "{}") }
        let monitor = StubPathMonitor(NetworkPath(isExpensive: false, isConstrained: true))
        let client = Self.client(stub, monitor: monitor)
        let heavy = Request<Data>.get("/video", policy: EndpointPolicy.standard.with(\.networkAccess, .respectsLowDataMode))
        let error = await StandardClientFixture.networkError { try await client.send(heavy) }
        #expect(error == .networkUnavailable(.constrained))
        _ = try await client.send(Request<Data>.get("/items"))  // an unrestricted call goes out
        #expect(stub.requestCount == 1)
    }

    @Test func theSameCallGoesOutOnceThePathIsCheap() async throws {
        let stub = StubTransport { _ in .status(200, body: "{}") }
        let monitor = StubPathMonitor(NetworkPath(isExpensive: true))
        let client = Self.client(stub, monitor: monitor)
        _ = await StandardClientFixture.networkError { try await client.send(Self.prefetch) }
        monitor.path.set(NetworkPath(isExpensive: false, isConstrained: false))
        _ = try await client.send(Self.prefetch)
        #expect(stub.requestCount == 1)
    }

    @Test func anUnknownPathCostOrNoMonitorIsADocumentedNoOp() async throws {
        let stub = StubTransport { _ in .status(200, body: "{}") }
        _ = try await Self.client(stub, monitor: StubPathMonitor(NetworkPath())).send(Self.prefetch)
        _ = try await Self.client(stub, monitor: StubPathMonitor(nil)).send(Self.prefetch)
        _ = try await Self.client(stub, monitor: nil).send(Self.prefetch)
        #expect(stub.requestCount == 3)
    }

    @Test func aRefusalIsNeverRetriedAndHasItsOwnMessage() async throws {
        let stub = StubTransport { _ in .status(200, body: "{}") }
        let error = await StandardClientFixture.networkError {
            try await Self.client(stub, monitor: StubPathMonitor(NetworkPath(isExpensive: true))).send(Self.prefetch)
        }
        #expect(stub.requestCount == 0)
        #expect(error?.userMessage.contains("Wi-Fi") == true)
    }

    @Test func withoutASystemReasonNotConnectedToInternetStaysOffline() {
        #expect(NetworkError(urlError: URLError(.notConnectedToInternet)).kind == .offline)
    }

    /// Apple's refusal (`notConnectedToInternet` with `networkUnavailableReason`), read through an
    /// injected reader as the Apple adapter reads it: the same typed error as a monitor's refusal.
    @Test func theSystemsRefusalMapsToTheSameTypedError() {
        for reason in NetworkUnavailableReason.allCases {
            let error = NetworkError(urlError: URLError(.notConnectedToInternet), unavailableReason: { _ in reason })
            #expect(error == .networkUnavailable(reason))
        }
    }

    @Test func accessRefusalFollowsThePath() {
        let path = NetworkPath(isExpensive: true, isConstrained: true)
        #expect(NetworkAccess.prefetch.refusal(on: path) == .expensive)
        #expect(NetworkAccess.respectsLowDataMode.refusal(on: path) == .constrained)
        #expect(NetworkAccess.unrestricted.refusal(on: path) == nil)
        #expect(NetworkAccess.prefetch.refusal(on: nil) == nil)
    }
}
