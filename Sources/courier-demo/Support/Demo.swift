import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierEnvironments

/// Shared state of a demo run: where the reference server is, which namespace the run uses, and
/// how chapters print. Each chapter is a function `run…Chapter(_ demo: Demo) async throws`.
struct Demo: Sendable {
    /// The reference server root, e.g. `http://127.0.0.1:8080`.
    let serverURL: URL
    /// A namespace private to this run, so reruns start from the seeded state.
    let namespace: String
    /// A second, independent reference server (the environments chapter's "production"); the
    /// first one when only one was given.
    var secondServerURL: URL

    /// The environment for this run: `serverURL/ns/<namespace>`.
    var environment: APIEnvironment {
        APIEnvironment(name: "local", baseURL: serverURL.appendingPathComponent("ns").appendingPathComponent(namespace))
    }

    /// A client for this run's environment. Every client logs through the redacting console
    /// logger and records into the run's HAR file (see ``DemoObservability``).
    func makeClient(configure: (inout APIClient.Configuration) -> Void = { _ in }) -> APIClient {
        APIClient(environment: environment) { configuration in
            configure(&configuration)
            DemoObservability.shared.install(into: &configuration)
        }
    }

    /// Whether request logs are shown inline (`--verbose`); by default each chapter prints only
    /// its summary lines and the full log goes to `.build/courier-demo.log`.
    static let verbose = CommandLine.arguments.contains("--verbose")

    /// Prints a chapter heading.
    func chapter(_ title: String) {
        Screen.shared.line("\n== \(title) ==")
    }

    /// Prints one line of what the "screen" shows.
    func say(_ line: String) {
        Screen.shared.line("  \(line)")
    }
}
