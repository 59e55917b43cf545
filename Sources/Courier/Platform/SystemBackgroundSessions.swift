#if canImport(Darwin)
import Foundation

/// The Apple adapter of ``BackgroundSessions``: `URLSessionConfiguration.background(withIdentifier:)`
/// (iOS 8+, macOS 10.10+) with `sessionSendsLaunchEvents` (iOS 7+; relaunches the app in the
/// background when a task finishes) and no URL cache.
struct SystemBackgroundSessions: BackgroundSessions {
    func configuration(identifier: String) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.background(withIdentifier: identifier)
        configuration.sessionSendsLaunchEvents = true
        configuration.urlCache = nil
        return configuration
    }
}
#endif
