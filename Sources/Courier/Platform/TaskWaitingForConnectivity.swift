#if canImport(Darwin)
import Foundation

/// Apple adapter: URLSession's `urlSession(_:taskIsWaitingForConnectivity:)` (iOS 11+, macOS
/// 10.13+; raised only when the session's configuration has `waitsForConnectivity`), forwarded to
/// the delegate's platform-neutral ``TransportSessionDelegate/taskIsWaitingForConnectivity(_:)``.
/// FoundationNetworking has no such callback; its twin under test is that method itself.
extension TransportSessionDelegate {
    @objc(URLSession:taskIsWaitingForConnectivity:)
    func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {
        taskIsWaitingForConnectivity(task.taskIdentifier)
    }
}
#endif
