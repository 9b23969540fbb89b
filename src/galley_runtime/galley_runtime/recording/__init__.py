"""Recording: rosbag2 bags (mcap or sqlite3) and HDF5 episodes, replay, and a dataset reader.

* :mod:`.writer`: :class:`BagWriter`, the small interface the ``recorder`` node writes through;
* :mod:`.open_writer`: :func:`open_bag_writer`, which picks an implementation;
* :mod:`.rosbags_writer`: the embedded host's writer (``rosbags``), crash-safe by splitting;
* :mod:`.staging`: a bag's layout while it is written (``.writing_<n>/``, the writer's lock) and the
  check readers make (an interrupted bag is refused with the repair named);
* :mod:`.repair`: ``galley bag repair``, which finishes the files a killed recording left unfinished;
* :mod:`.metadata_file`: metadata.yaml: merging a finished file into it, atomic writes, ``custom_data``;
* :mod:`.rosbag2_writer`: the writer under ROS 2 (``rosbag2_py``);
* :mod:`.hdf5`: one HDF5 file per episode, a group per topic;
* :mod:`.serialization`: CDR bytes of a message of either host;
* :mod:`.player`: replay of a bag into the embedded host on the bag's clock;
* :mod:`.dataset`: episodes of a folder of bags as time-synchronised samples for training.

Nothing here is imported by the nodes at start-up unless recording is asked for, so that nodes
under ROS 2 need neither rosbags nor h5py.
"""
