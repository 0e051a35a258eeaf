async = 1
await = 2
