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
