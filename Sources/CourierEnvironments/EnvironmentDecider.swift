import Courier
import Foundation

/// The decision rule of ``EnvironmentSet``, apart from the set so every branch is testable:
/// override > persisted choice > build, with locked builds decided by the build alone.
enum EnvironmentDecider {
    /// Decides among `ids`.
    ///
    /// - An override naming an unknown environment throws: a typo in a run scheme must be loud,
    ///   not silently fall back to another server.
    /// - A persisted choice naming an unknown environment (removed in a newer app version) or an
    ///   unreadable store is skipped and noted.
    /// - Throws: `EnvironmentError.unknownEnvironment(_:known:)` for an unknown override.
    static func decide(
        ids: [String], mapping: BuildMapping, switching: EnvironmentSwitching,
        override: EnvironmentOverride?, persisted: () throws -> String?, build: BuildChannelReading
    ) throws -> EnvironmentDecision {
        let locked = switching.isLocked(build.channel)
        var notes: [String] = []
        if let override {
            if locked {
                notes.append("\(override) ignored: switching is forbidden in this build (\(build.channel))")
            } else if ids.contains(override.environmentID) {
                return EnvironmentDecision(
                    environmentID: override.environmentID, source: .override(override), build: build)
            } else {
                throw EnvironmentError.unknownEnvironment(override.environmentID, known: ids)
            }
        }
        do {
            if let saved = try persisted() {
                if locked {
                    notes.append("persisted choice '\(saved)' ignored: switching is forbidden in this build (\(build.channel))")
                } else if ids.contains(saved) {
                    return EnvironmentDecision(environmentID: saved, source: .persisted, build: build, notes: notes)
                } else {
                    notes.append("persisted choice '\(saved)' ignored: no such environment")
                }
            }
        } catch {
            notes.append("persisted choice unreadable (\(error)); ignored")
        }
        return EnvironmentDecision(
            environmentID: mapping.environmentID(for: build.channel), source: .build, build: build, notes: notes)
    }
}
