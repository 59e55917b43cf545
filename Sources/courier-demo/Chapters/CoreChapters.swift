import Courier

/// The core chapters (items list, CRUD, error paths). Filled in by the core demo.
func runCoreChapters(_ demo: Demo) async throws {
    demo.chapter("Items")
}
