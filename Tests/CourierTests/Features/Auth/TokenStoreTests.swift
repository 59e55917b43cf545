import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import Courier
import CourierTesting

extension AuthTests {
    /// The token stores: in-memory and file-backed (atomic, mode 0600).
    @Suite struct TokenStoreTests {
        static let tokens = AuthTokens(
            accessToken: "eyJ.access.token", refreshToken: "refresh-secret-42",
            expiresAt: Date(timeIntervalSince1970: 1_800_000_000.5))

        /// A fresh directory under the system temporary directory, removed by `body`'s end.
        static func withTemporaryDirectory(_ body: (URL) throws -> Void) throws {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("courier-tokens-\(UUID().uuidString)", isDirectory: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            try body(directory)
        }

        static func mode(of url: URL) throws -> UInt32 {
            var info = stat()
            guard stat(url.path, &info) == 0 else {
                throw TokenStoreError.fileSystem(operation: "stat", path: url.path, errno: errno)
            }
            return UInt32(info.st_mode) & 0o777
        }

        @Test func inMemoryRoundTrip() {
            let store = InMemoryTokenStore()
            #expect(store.read() == nil)
            store.write(Self.tokens)
            #expect(store.read() == Self.tokens)
            store.clear()
            #expect(store.read() == nil)
        }

        /// The grant ID is stored with the tokens; a file an earlier version wrote (no `grant_id`)
        /// reads as tokens without one.
        @Test func theFileKeepsTheGrantIDAndReadsFilesWithoutOne() throws {
            try Self.withTemporaryDirectory { directory in
                let url = directory.appendingPathComponent("tokens.json")
                let store = FileTokenStore(fileURL: url)
                var tokens = Self.tokens
                tokens.grantID = "5D2C7D0A-0F4E-4C4B-9C53-2B0D5E7A1F00"
                try store.write(tokens)
                #expect(try FileTokenStore(fileURL: url).read() == tokens)

                try Data(#"{"access_token":"a","expires_at":1800000000,"refresh_token":"r"}"#.utf8).write(to: url)
                let legacy = try #require(try store.read())
                #expect(legacy.refreshToken == "r" && legacy.grantID == nil)
            }
        }

        @Test func fileRoundTripWithMode0600() throws {
            try Self.withTemporaryDirectory { directory in
                let url = directory.appendingPathComponent("nested/session/tokens.json")
                let store = FileTokenStore(fileURL: url)
                #expect(try store.read() == nil)
                try store.write(Self.tokens)
                #expect(try Self.mode(of: url) == 0o600)
                #expect(try Self.mode(of: url.deletingLastPathComponent()) == 0o700)
                #expect(try store.read() == Self.tokens)
                #expect(try FileTokenStore(fileURL: url).read() == Self.tokens)  // a new instance reads the file

                var rotated = Self.tokens
                rotated.refreshToken = "refresh-secret-43"
                try store.write(rotated)
                #expect(try store.read() == rotated)
                #expect(try Self.mode(of: url) == 0o600)
                // Atomic replace leaves no temporary files behind.
                #expect(
                    try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path) == ["tokens.json"])

                try store.clear()
                #expect(try store.read() == nil)
                try store.clear()  // clearing twice is fine
            }
        }

        @Test func modeIs0600EvenWithAPermissiveUmask() throws {
            try Self.withTemporaryDirectory { directory in
                let previous = umask(0)
                defer { umask(previous) }
                let url = directory.appendingPathComponent("tokens.json")
                try FileTokenStore(fileURL: url).write(Self.tokens)
                #expect(try Self.mode(of: url) == 0o600)
            }
        }

        @Test func worldReadableFileIsTightenedOnRead() throws {
            try Self.withTemporaryDirectory { directory in
                let url = directory.appendingPathComponent("tokens.json")
                let store = FileTokenStore(fileURL: url)
                try store.write(Self.tokens)
                #expect(chmod(url.path, 0o644) == 0)
                #expect(try store.read() == Self.tokens)
                #expect(try Self.mode(of: url) == 0o600)
            }
        }

        @Test func corruptedFileIsATypedError() throws {
            try Self.withTemporaryDirectory { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let url = directory.appendingPathComponent("tokens.json")
                try Data("{\"access_tok".utf8).write(to: url)
                #expect(throws: TokenStoreError.self) { try FileTokenStore(fileURL: url).read() }
            }
        }

        /// Through a client: a token file that cannot be read is its own typed error (not a
        /// network error the user is told to retry on a better connection), and nothing is sent.
        @Test func aCallWithAnUnreadableTokenFileFailsTypedAndSendsNothing() async throws {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("courier-tokens-\(UUID().uuidString)", isDirectory: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let url = directory.appendingPathComponent("tokens.json")
            try Data("garbage".utf8).write(to: url)
            let stub = StubTransport { _ in .status(200, body: "{}") }
            let tokens = TokenManager(
                store: FileTokenStore(fileURL: url), grant: .oauth2(tokenURL: URL(string: "https://auth.example.test/token")!))
            let client = StandardClientFixture.client(stub) { $0.interceptors = .standard(tokenManager: tokens) }
            let error = await #expect(throws: NetworkError.self) {
                try await client.send(Request<Data>.get("/me", policy: .authorizedRead))
            }
            guard case .tokenStoreFailed(.corrupted)? = error else {
                Issue.record("expected tokenStoreFailed(.corrupted), got \(String(describing: error))")
                return
            }
            #expect(error?.kind == .tokenStoreFailed)
            #expect(error?.userMessage == "Your sign-in could not be read. Try again in a moment.")
            #expect(stub.requestCount == 0)
        }

        @Test func symlinkIsRefused() throws {
            try Self.withTemporaryDirectory { directory in
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let target = directory.appendingPathComponent("elsewhere.json")
                let store = FileTokenStore(fileURL: target)
                try store.write(Self.tokens)
                let link = directory.appendingPathComponent("tokens.json")
                try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
                #expect(throws: TokenStoreError.self) { try FileTokenStore(fileURL: link).read() }
            }
        }

        @Test func unwritableDirectoryFailsAndKeepsTheOldFile() throws {
            guard getuid() != 0 else { return }  // root ignores directory permissions
            try Self.withTemporaryDirectory { directory in
                let url = directory.appendingPathComponent("tokens.json")
                let store = FileTokenStore(fileURL: url)
                try store.write(Self.tokens)
                #expect(chmod(directory.path, 0o500) == 0)
                defer { _ = chmod(directory.path, 0o700) }
                var rotated = Self.tokens
                rotated.refreshToken = "other"
                #expect(throws: TokenStoreError.self) { try store.write(rotated) }
                #expect(try store.read() == Self.tokens)
            }
        }

        @Test func tokensNeverAppearInText() {
            let texts = [
                "\(Self.tokens)", String(reflecting: Self.tokens), String(describing: Self.tokens),
                {
                    var out = ""
                    dump(Self.tokens, to: &out)
                    return out
                }(),
                String(describing: OAuthTokenResponse(accessToken: "eyJ.access.token", refreshToken: "refresh-secret-42")),
            ]
            for text in texts {
                #expect(!text.contains("eyJ.access.token"))
                #expect(!text.contains("refresh-secret-42"))
                #expect(text.contains("redacted"))
            }
        }
    }
}
