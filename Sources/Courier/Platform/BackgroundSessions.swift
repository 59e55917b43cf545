import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Makes the configuration of a session the system runs while the app is suspended or terminated.
package protocol BackgroundSessions: Sendable {
    /// The configuration of the background session `identifier`.
    func configuration(identifier: String) -> URLSessionConfiguration
}

/// The Linux twin: FoundationNetworking has no background sessions
/// (`background(withIdentifier:)` is unavailable), so the session is an ordinary ephemeral one
/// (no cache) whose tasks end with the process.
struct ProcessBoundSessions: BackgroundSessions {
    func configuration(identifier: String) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        return configuration
    }
}
