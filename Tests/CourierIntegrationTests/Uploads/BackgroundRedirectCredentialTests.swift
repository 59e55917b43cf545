import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTransfers

/// Background transfers the environment's server redirects to another origin, over
/// ``URLSessionBackgroundTransport`` (an ordinary session on Linux): the session follows the
/// redirect itself, since no pipeline step runs for a background task, so the credentials a
/// hand-over put on the request must stay on their origin there too (RFC 9110 §15.4).
@Suite("Background redirects keep credentials on their origin")
struct BackgroundRedirectCredentialTests {
    /// A 307 from the first server (the environment) to the second (another origin).
    static func redirect(_ servers: TwoServers) -> String {
        let target = TwoServers.base(servers.second, servers.namespace).appendingPathComponent("echo/landed").absoluteString
        return "/status/307?location=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target)"
    }

    /// The download went on to the second server with `Authorization: Bearer eyJ…` (the
    /// signed-in user's access token) and the app's `X-Api-Key`: the second server logged both.
    @Test func aBackgroundDownloadRedirectedToAnotherOriginTakesNoCredentialThere() async throws {
        let servers = try TwoServers()
        let environment = try APIEnvironment("staging", baseURL: TwoServers.base(servers.first, servers.namespace))
        let (client, tokens) = try await AuthSession.signedInClient(environment)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bgdl-redirect-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = URLSessionBackgroundTransport(
            configuration: .ephemeral, downloadsDirectory: folder.appendingPathComponent("system"))
        let downloads = try BackgroundDownloads(
            client: client, directory: folder.appendingPathComponent("m"), transport: transport, tokenManager: tokens)
        let destination = folder.appendingPathComponent("landed.json")
        let id = try await downloads.enqueue(Self.redirect(servers), to: destination, headers: ["X-Api-Key": "key-private-1"])
        #expect(try await downloads.result(for: id) == destination)

        let first = try await servers.log(servers.first).filter { $0.path.hasSuffix("/status/307") }
        #expect(first.count == 1 && first.first?.header("Authorization")?.hasPrefix("Bearer ") == true)
        let second = try await servers.log(servers.second)
        #expect(second.map(\.path).contains { $0.hasSuffix("/echo/landed") })
        for request in second {
            #expect(request.header("Authorization") == nil, "\(request.path): \(request.header("Authorization") ?? "")")
            #expect(request.header("X-Api-Key") == nil, "\(request.path)")
        }
    }

    /// The upload's 307 to the second server (a storage host) carried `Authorization: Bearer eyJ…`.
    @Test func aBackgroundUploadRedirectedToAnotherOriginTakesNoTokenThere() async throws {
        let servers = try TwoServers()
        let environment = try APIEnvironment("staging", baseURL: TwoServers.base(servers.first, servers.namespace))
        let (client, tokens) = try await AuthSession.signedInClient(environment)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgup-redirect-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let manager = try UploadManager(
            client: client, directory: directory, backgroundTransport: URLSessionBackgroundTransport(configuration: .ephemeral),
            tokenManager: tokens)
        let file = directory.appendingPathComponent("photo.bin")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(repeating: 7, count: 1000).write(to: file)
        let id = try await manager.enqueue(
            fileAt: file, to: Self.redirect(servers), method: .put, contentType: "application/octet-stream", mode: .background)
        _ = try? await manager.result(for: id)  // where the redirected upload ends is not the point

        let first = try await servers.log(servers.first).filter { $0.path.hasSuffix("/status/307") }
        #expect(first.count == 1 && first.first?.header("Authorization")?.hasPrefix("Bearer ") == true)
        for request in try await servers.log(servers.second) {
            #expect(request.header("Authorization") == nil, "\(request.path): \(request.header("Authorization") ?? "")")
        }
    }
}
