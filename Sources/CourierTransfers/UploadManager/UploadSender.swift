import Courier
import Foundation

/// The manager sending an upload, as the registry records it: its process and the manager itself.
///
/// Several managers may share one folder (an app and its share extension). An upload whose sender
/// is alive is left to it by every other manager; one whose sender has ended — its process is
/// gone, or the manager was released — is taken over by the next manager that resumes it. No lock
/// is held while an upload runs: on iOS a process suspended while it holds a file lock in an app
/// group's container is terminated (exception code 0xdead10cc).
package struct UploadSender: Codable, Sendable, Hashable {
    /// The sender's process identifier (`getpid()`).
    package var process: Int32
    /// The manager's identifier, new for every ``UploadManager``.
    package var manager: UUID

    /// The managers of this process that have not ended.
    private static let live = Locked<Set<UUID>>([])

    /// A new manager of this process, alive until ``end()``.
    static func begin() -> UploadSender {
        let sender = UploadSender(process: getpid(), manager: UUID.random())
        live.withLock { _ = $0.insert(sender.manager) }
        return sender
    }

    /// This manager has ended: other managers may take its uploads over.
    func end() {
        Self.live.withLock { _ = $0.remove(manager) }
    }

    /// Whether the sender may still be sending: a manager of this process that has not ended, or a
    /// process that still exists (`kill(pid, 0)` does not fail with `ESRCH`). A process identifier
    /// that another program has reused reads as alive: the upload then waits until that program
    /// ends, and is never sent twice.
    var isAlive: Bool {
        if process == getpid() { return Self.live.withLock { $0.contains(manager) } }
        return kill(process, 0) == 0 || errno == EPERM
    }
}
