import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process for tests (helpers that crash on purpose, a second run of the test binary,
/// coreutils as a second implementation), started without `Foundation.Process` on Linux.
///
/// swift-corelibs-foundation's `Process.run()` (Swift 6.3.1) lists `/proc/self/fd` to close the
/// parent's descriptors in the child, copying each directory entry's whole 256-byte `d_name`
/// where glibc's entries are sized to their name: an entry at the end of glibc's buffer, before
/// an unmapped page, makes the copy fault (swiftlang/swift-corelibs-foundation#5472). A test
/// process with hundreds of sockets open crashed that way (SIGSEGV in `Process.run()`, the
/// fresh-clone CI of 2026-12-06). Here the child is made with `posix_spawn(3)`, its descriptors
/// above 2 closed with glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+, looked up at
/// run time: Swift's Glibc module does not export it). Elsewhere `Foundation.Process` is used.
package final class ChildProcess: Sendable {
    /// The child's process ID.
    package let processIdentifier: Int32
    private let status: Task<Int32, Never>
    private let ended: Locked<Bool>

    /// A child that could not be started: what failed and the `errno` (or `Process` error).
    package struct SpawnFailure: Error, CustomStringConvertible {
        package let description: String
    }

    private init(processIdentifier: Int32, ended: Locked<Bool>, status: Task<Int32, Never>) {
        self.processIdentifier = processIdentifier
        self.ended = ended
        self.status = status
    }

    /// Whether the child has not ended yet (its status not yet collected).
    package var isRunning: Bool { !ended.current }

    /// The exit code, or the number of the signal that ended the child (as `Process.terminationStatus`).
    package var terminationStatus: Int32 {
        get async { await status.value }
    }

    /// Sends `signal` to the child (`SIGKILL`, `SIGTERM`).
    package func send(_ signal: Int32) {
        _ = kill(processIdentifier, signal)
    }

    #if canImport(Glibc)
    /// Starts `executable`.
    ///
    /// - Parameters:
    ///   - executable: The program.
    ///   - arguments: Its arguments (not counting the program's name).
    ///   - environment: Its environment; this process's when `nil`.
    ///   - standardOutput: A file its standard output replaces (created or truncated); `/dev/null` when `nil`.
    ///   - standardError: The same for its standard error.
    /// - Throws: ``SpawnFailure`` when the child could not be started.
    package static func run(
        _ executable: URL, arguments: [String] = [], environment: [String: String]? = nil,
        standardOutput: URL? = nil, standardError: URL? = nil
    ) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let redirections: [(Int32, String, Int32)] = [
            (0, "/dev/null", O_RDONLY),
            (1, standardOutput?.path ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC),
            (2, standardError?.path ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC),
        ]
        for (descriptor, path, flags) in redirections {
            let result = posix_spawn_file_actions_addopen(&actions, descriptor, path, flags, 0o644)
            guard result == 0 else { throw SpawnFailure(description: "addopen \(path): errno \(result)") }
        }
        guard let closeFrom = closeFromAction else {
            throw SpawnFailure(description: "glibc has no posix_spawn_file_actions_addclosefrom_np (2.34+)")
        }
        guard closeFrom(&actions, 3) == 0 else { throw SpawnFailure(description: "addclosefrom_np failed") }

        var argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        var envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = argv.withUnsafeMutableBufferPointer { arguments in
            envp.withUnsafeMutableBufferPointer { variables in
                guard let arguments = arguments.baseAddress, let variables = variables.baseAddress else { return EINVAL }
                return posix_spawn(&pid, executable.path, &actions, nil, arguments, variables)
            }
        }
        guard result == 0 else { throw SpawnFailure(description: "posix_spawn \(executable.path): errno \(result)") }
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        // waitpid blocks: on a thread of its own, never one of Swift's cooperative pool.
        let child = pid
        let ended = Locked(false)
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) == -1, errno == EINTR {}
            // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import (macros).
            let signal = status & 0x7f
            ended.set(true)
            continuation.yield(signal == 0 ? (status >> 8) & 0xff : signal)
            continuation.finish()
        }
        return ChildProcess(processIdentifier: pid, ended: ended, status: Task { await stream.first { _ in true } ?? -1 })
    }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np`, looked up once.
    private static let closeFromAction: CloseFrom? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            return nil
        }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }()
    #else
    /// Starts `executable` with `Foundation.Process` (see the type's documentation).
    package static func run(
        _ executable: URL, arguments: [String] = [], environment: [String: String]? = nil,
        standardOutput: URL? = nil, standardError: URL? = nil
    ) throws -> ChildProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        for (url, set) in [(standardOutput, { process.standardOutput = $0 }), (standardError, { process.standardError = $0 })] {
            guard let url else {
                set(FileHandle.nullDevice)
                continue
            }
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
            set(try FileHandle(forWritingTo: url))
        }
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        let ended = Locked(false)
        process.terminationHandler = {
            ended.set(true)
            continuation.yield($0.terminationStatus)
            continuation.finish()
        }
        do {
            try process.run()
        } catch {
            throw SpawnFailure(description: "\(executable.path): \(error)")
        }
        return ChildProcess(
            processIdentifier: process.processIdentifier, ended: ended, status: Task { await stream.first { _ in true } ?? -1 })
    }
    #endif
}
