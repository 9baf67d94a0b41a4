"""Process housekeeping shared by the warehouse, the analyses and the app: the cache folder, dead processes' leftover
folders, the disk room an ingest needs, and a background prefetch. Imports nothing of ours."""
from ._cache_dir import cache_dir
from ._disk_room import NoRoomForIngest, check_room, room_left, room_needed
from ._prefetch import prefetched
from ._stale_dirs import pid_alive, sweep_dead_process_dirs

__all__ = [
    "NoRoomForIngest", "cache_dir", "check_room", "pid_alive", "prefetched", "room_left", "room_needed",
    "sweep_dead_process_dirs",
]
