import Courier
import Foundation

extension APIEnvironment {
    /// An environment for tests and previews whose requests a stub transport answers (see
    /// ``StubTransport``): `https://api.example.com`, a domain reserved for examples (RFC 2606),
    /// so a test that forgot its stub reaches no real server.
    ///
    /// ```swift
    /// let client = APIClient(environment: .stub) { $0.transport = StubTransport(responses: [.status(204)]) }
    /// ```
    public static let stub = APIEnvironment(name: "stub", baseURL: URL(string: "https://api.example.com")!)
}
