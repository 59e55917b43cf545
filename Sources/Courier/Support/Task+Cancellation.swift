extension Task where Failure == any Error {
    /// The task's value, awaited so that cancelling the waiting task cancels this one too (an
    /// unstructured task otherwise runs on after its caller gave up).
    package var valueCancelledWithCaller: Success {
        get async throws {
            try await withTaskCancellationHandler {
                try await value
            } onCancel: {
                cancel()
            }
        }
    }
}
