"""The review app's routes, one router per concern: auth, queue, edges, groups, settings, results."""
