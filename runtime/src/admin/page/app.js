// toolwright admin page
