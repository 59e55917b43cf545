import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a ``SampleTransport`` answers: at once or after a delay on its clock, with the default
/// sample or a named one, or with a network failure.
public struct SampleBehavior: Sendable, Hashable {
    /// Waited on the transport's clock before answering; zero answers at once.
    public var delay: Duration
    /// The sample to answer with, by `name`; `nil` for the endpoint's first.
    public var sampleName: String?
    /// A failure to throw instead of answering (`URLError(.notConnectedToInternet)` shows the
    /// offline state); `nil` to answer.
    public var failure: URLError?

    /// Creates a behaviour.
    public init(delay: Duration = .zero, sampleName: String? = nil, failure: URLError? = nil) {
        self.delay = delay
        self.sampleName = sampleName
        self.failure = failure
    }

    /// The default sample, at once.
    public static let immediate = SampleBehavior()

    /// The default sample after `delay` (a loading state to look at).
    public static func delayed(_ delay: Duration) -> SampleBehavior { SampleBehavior(delay: delay) }

    /// The sample named `name` (an empty list, an error status).
    public static func sample(named name: String) -> SampleBehavior { SampleBehavior(sampleName: name) }

    /// Fails with `error`, after `delay`.
    public static func failing(_ error: URLError, after delay: Duration = .zero) -> SampleBehavior {
        SampleBehavior(delay: delay, failure: error)
    }
}
