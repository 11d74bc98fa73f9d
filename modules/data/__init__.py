"""The train data as the Trainer reads it: decode caches, class weights."""
