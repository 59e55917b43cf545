import Foundation
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
@testable import CourierRealtime

/// Hundreds of WebSocket connections over libcurl in one process, each open and echoing.
///
/// A quiet connection's read used to wait in `poll(2)` on a dispatch thread of its own, and
/// libdispatch's overcommit threads are capped (255 on Linux): 240 connections worked, 300 hung
/// the whole process. A read now waits on a dispatch read source, holding no thread; a write to a
/// peer that stopped reading waits for room on a dispatch write source, likewise.
@Suite("Many WebSocket connections over libcurl at once")
struct ManyConnectionsTests {
    /// A client over libcurl without keepalive or reconnects.
    private static func client(
        _ url: URL, configure: (inout WebSocketClient.Configuration) -> Void = { _ in }
    ) -> WebSocketClient {
        var configuration = WebSocketClient.Configuration(url: url)
        configuration.keepalive = nil
        configuration.reconnect = .never
        configure(&configuration)
        return WebSocketClient(
            configuration: configuration, transport: RFC6455Transport.curl(), clock: ContinuousClock(), random: { 0.5 })
    }

    /// One more connection opens, echoes a message and closes: what a process with no thread
    /// left for libdispatch could not do.
    private static func expectAnotherConnectionEchoes(_ namespace: String) async throws {
        let echo = client(try RealtimeServers.url("COURIER_WS_URL").appendingPathComponent("ns/\(namespace)/echo"))
        let messages = Collected(echo.messages())
        await echo.connect()
        try await eventually("the echo connection open") { await echo.state == .open }
        try await echo.send(text: "still here")
        try await eventually("the echo") { messages.all == [.text("still here")] }
        await echo.close()
    }

    @Test("300 connections open, each echoes its own message, and all close", .timeLimit(.minutes(2)))
    func threeHundredConnectionsEchoAtOnce() async throws {
        let namespace = RealtimeServers.namespace("many")
        let url = try RealtimeServers.url("COURIER_WS_URL").appendingPathComponent("ns/\(namespace)/echo")
        let clients = (0..<300).map { _ in
            Self.client(url)
        }
        let collected = clients.map { Collected($0.messages()) }
        for client in clients { await client.connect() }
        for (index, client) in clients.enumerated() {
            try await eventually("connection \(index) open") { await client.state == .open }
            try await client.send(text: "hello \(index)")
        }
        for (index, messages) in collected.enumerated() {
            try await eventually("echo \(index)") { messages.all.count == 1 }
            #expect(messages.all == [.text("hello \(index)")])
        }
        for client in clients { await client.close() }
        for client in clients { #expect(await client.state == .closed(code: .normalClosure, reason: "")) }
    }

    @Test(
        "300 writes stuck on peers that stopped reading hold no thread: another connection still opens and echoes",
        .timeLimit(.minutes(2)))
    func writesToPeersThatStoppedReadingHoldNoThread() async throws {
        let namespace = RealtimeServers.namespace("many-stuck")
        let faults = try RealtimeServers.url("COURIER_WS_FAULTS_URL").absoluteString
        let stuckURL = try #require(URL(string: "\(faults)/ns/\(namespace)/stop-reading"))
        let stuck = (0..<300).map { _ in
            var configuration = WebSocketClient.Configuration(url: stuckURL)
            configuration.keepalive = nil
            configuration.reconnect = .never
            configuration.writeTimeout = .seconds(120)  // never reached: the test ends the writes by closing
            var transport = RFC6455Transport { request in
                var bounded = request
                bounded.sendBufferSize = 16 * 1024  // the kernel takes little, so each write waits at once
                return try await CurlByteStream.connect(bounded)
            }
            transport.closeTimeout = .milliseconds(500)
            return WebSocketClient(configuration: configuration, transport: transport, clock: ContinuousClock(), random: { 0.5 })
        }
        for client in stuck { await client.connect() }
        for (index, client) in stuck.enumerated() {
            try await eventually("stuck connection \(index) open") { await client.state == .open }
        }
        // 256 KiB cannot fit in the server's 4 KiB receive buffer plus the 16 KiB send buffer (the kernel
        // doubles it): each write waits for room at once.
        let ended = Locked(0)
        let sends = stuck.map { client in
            Task {
                defer { ended.withLock { $0 += 1 } }
                try await client.send(data: Data(count: 256 << 10))
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        #expect(ended.current == 0, "a write to a peer that stopped reading ended")

        // With a thread held per stuck write, libdispatch had none left (255 on Linux): this
        // connection's open and its read never ran, until the writes' deadlines.
        try await Self.expectAnotherConnectionEchoes(namespace)
        #expect(ended.current == 0)

        // Closing ends every stuck write with an error, promptly.
        await withTaskGroup(of: Void.self) { group in
            for client in stuck { group.addTask { await client.close() } }
        }
        for send in sends { await #expect(throws: WebSocketError.self) { try await send.value } }
        for client in stuck {
            guard case .closed = await client.state else {
                Issue.record("a stuck connection is \(await client.state) after close()")
                continue
            }
        }
    }

    /// A closed connection's descriptor number goes to the next connection at once. The socket
    /// used to be closed before the read source watching it was cancelled, which libdispatch does
    /// not allow: the new connection's source could share the old registration and never wake.
    @Test("600 connections opened and closed in quick turns by 30 tasks each echo their message", .timeLimit(.minutes(2)))
    func connectionsThatReuseDescriptorsEcho() async throws {
        let namespace = RealtimeServers.namespace("churn")
        let url = try RealtimeServers.url("COURIER_WS_URL").appendingPathComponent("ns/\(namespace)/echo")
        let echoed = Locked(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<30 {
                group.addTask {
                    for round in 0..<20 {
                        let client = Self.client(url)
                        let messages = Collected(client.messages())
                        await client.connect()
                        try await eventually("connection \(worker).\(round) open") { await client.state == .open }
                        try await client.send(text: "\(worker).\(round)")
                        try await eventually("echo \(worker).\(round)") { messages.all == [.text("\(worker).\(round)")] }
                        echoed.withLock { $0 += 1 }
                        await client.close()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(echoed.current == 600)
    }

    /// A connect used to block a libdispatch thread in `curl_easy_perform` until it was made or
    /// timed out; 300 connects to a host that never answers took every overcommit thread (255 on
    /// Linux) for the connect timeout. A connect now waits on dispatch sources and a timer
    /// (``CurlConnector``), and closing the client ends it at once.
    @Test(
        "300 connects to a host that never answers hold no thread: another connection still opens and echoes; closing ends them",
        .timeLimit(.minutes(2)))
    func connectsToASilentHostHoldNoThread() async throws {
        let silent = try SilentListener()
        defer { silent.stop() }
        let silentURL = try #require(URL(string: "ws://127.0.0.1:\(silent.port)/never"))
        let waiting = (0..<300).map { _ in
            // The connect timeout is never reached: the test ends the connects.
            Self.client(silentURL) { $0.connectTimeout = .seconds(100) }
        }
        for client in waiting { await client.connect() }
        try await Task.sleep(for: .milliseconds(500))
        for client in waiting {
            guard case .connecting = await client.state else {
                Issue.record("a connect to the silent host ended: \(await client.state)")
                break
            }
        }

        try await Self.expectAnotherConnectionEchoes(RealtimeServers.namespace("many-connecting"))

        let start = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            for client in waiting { group.addTask { await client.close() } }
        }
        #expect(ContinuousClock.now - start < .seconds(20), "closing 300 connecting clients took \(ContinuousClock.now - start)")
        for client in waiting {
            guard case .closed = await client.state else {
                Issue.record("a connecting client is \(await client.state) after close()")
                continue
            }
        }
    }
}

/// A loopback TCP port that listens with the smallest backlog and never accepts: once its queue is
/// full, the kernel drops further SYNs, so a connect to it waits until its own timeout.
private final class SilentListener: Sendable {
    let port: Int
    private let socket: Int32

    init() throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SilentListenerError() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && listen(fd, 0) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw SilentListenerError()
        }
        socket = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func stop() { close(socket) }
}

private struct SilentListenerError: Error {}
