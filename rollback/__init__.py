"""Versions and rollback: `imagepipe versions` lists what was pushed, `imagepipe rollback`
serves an earlier version. Pushing a version is the Pusher's (components/image_pusher/)."""
