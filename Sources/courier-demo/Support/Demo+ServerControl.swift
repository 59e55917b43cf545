import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

extension Demo {
    /// `POST <environment>/<path>` with a JSON body, outside the client under demonstration: the
    /// reference server's control routes (`auth/config`, `auth/revoke`, `_faults`).
    func controlPOST(_ path: String, _ json: [String: Any]) async throws {
        var request = URLRequest(url: environment.baseURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: json)
        let (_, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
    }

    /// The reference server's counters for this run (`GET <environment>/_stats`), decoded as `T`.
    func serverStats<T: Decodable>(_ type: T.Type = T.self) async throws -> T {
        let (data, _) = try await URLSession.shared.data(from: environment.baseURL.appendingPathComponent("_stats"))
        return try JSONDecoder().decode(T.self, from: data)
    }
}

/// The reference server's sign-in body (`POST /auth/login`): the demo user, and optionally a
/// shorter life for the access token it hands out.
struct DemoLogin: Encodable, Sendable {
    var username = "alice"
    var password = "secret"
    /// Seconds the access token lives; the server's default when `nil`.
    var accessTtl: Double?
}

extension Demo {
    /// Signs the demo user in through `client` (`POST /auth/login`) and hands the tokens to
    /// `tokens`; returns the server's token response.
    @discardableResult
    func signIn(
        through client: APIClient, into tokens: TokenManager, accessTtl: Double? = nil
    ) async throws -> OAuthTokenResponse {
        let login = try await client.send(
            Request<OAuthTokenResponse>.post("/auth/login", body: DemoLogin(accessTtl: accessTtl)))
        try await tokens.signIn(login.tokens())
        return login
    }
}
