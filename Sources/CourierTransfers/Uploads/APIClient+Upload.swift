import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension APIClient {
    /// Starts sending `endpoint` and returns the running ``Upload`` with its progress.
    ///
    /// The body is the endpoint's: `.data` (from memory), `RequestBody.file(_:contentType:)`
    /// (streamed from disk in constant memory, re-read from the start for a retry),
    /// ``Courier/RequestBody/multipart(_:memoryThreshold:)``, or any `BodyStream`. Use the
    /// `EndpointPolicy.authorizedUpload` policy for a long deadline, an idempotency key and the
    /// upload retry preset.
    ///
    /// - Returns: The upload, already running.
    public func upload<E: Endpoint>(_ endpoint: E) -> Upload<E.Response> {
        startUpload(endpoint)
    }

    /// Starts sending a `Request` value: `client.upload(.post("/files", body: .file(url, contentType: "text/csv")))`.
    public func upload<Value>(_ request: Request<Value>) -> Upload<Value> {
        startUpload(request)
    }

    /// ``upload(_:)-(Request<Value>)`` sent only while the client points at the environment
    /// `requiredEnvironment` names (else it fails with `EnvironmentMismatch`) and only with a token
    /// of the account `requiredSignIn` names (else it fails with `SignInMismatch`), nothing sent
    /// otherwise: the ``UploadManager``'s way to never send a pending upload to another
    /// environment's server or with another environment's or the next user's token.
    package func upload<Value>(
        _ request: Request<Value>, requiredEnvironment: String?, requiredSignIn: SignInRequirement?
    ) -> Upload<Value> {
        startUpload(request, requiredEnvironment: requiredEnvironment, requiredSignIn: requiredSignIn)
    }

    private func startUpload<E: Endpoint>(
        _ endpoint: E, requiredEnvironment: String? = nil, requiredSignIn: SignInRequirement? = nil
    ) -> Upload<E.Response> {
        let (progress, continuation) = AsyncStream.makeStream(of: TransferProgress.self, bufferingPolicy: .bufferingNewest(1))
        let tracker = UploadProgressTracker(knownTotal: endpoint.body.knownLength, continuation: continuation)
        let context = RequestContext(for: endpoint, traits: CallTraits(transferProgress: tracker.reporter))
        let task = Task { [self] in
            do {
                let response = try await self.response(
                    for: endpoint, context: context, requiredEnvironment: requiredEnvironment, requiredSignIn: requiredSignIn)
                tracker.finish(sentTotal: nil)
                return response
            } catch {
                tracker.fail()
                throw error
            }
        }
        return Upload(progress: progress, task: task, context: context)
    }
}
